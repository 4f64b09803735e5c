# cmake -DROOT=<course> -P cmake/CheckCMake322.cmake
# The course must build with CMake 3.22 (Ubuntu 22.04's and Colab's). CMake 3.22 itself is not
# available on the machines that test this project, so this script looks through every CMake
# file of the project for the commands, arguments, generator expressions and properties that
# came after 3.22 (each with the version that added it, from CMake's documentation), and for
# any cmake_minimum_required above 3.22. CMakePresets.json (workflow presets need 3.25) is not
# part of the ./cudalings path and is not checked.
cmake_minimum_required(VERSION 3.22)

set(newer
  "(^|[^a-z_])block[ ]*\\(|3.25"
  "endblock[ ]*\\(|3.25"
  "return[ ]*\\([ ]*PROPAGATE|3.25"
  "cmake_language[ ]*\\([ ]*(GET_MESSAGE_LOG_LEVEL|EXIT|SET_DEPENDENCY_PROVIDER)|3.24"
  "\\$<LIST:|3.27"
  "\\$<PATH:|3.24"
  "\\$<COMPILE_ONLY:|3.27"
  "\\$<LINK_LIBRARY:|3.24"
  "\\$<LINK_GROUP:|3.24"
  "FIND_PACKAGE_ARGS|3.24"
  "OVERRIDE_FIND_PACKAGE|3.24"
  "find_package[ ]*\\([^)]*GLOBAL|3.24"
  "add_subdirectory[ ]*\\([^)]*SYSTEM|3.25"
  "CUDA_ARCHITECTURES[ \"]+(native|all|all-major)|3.23"
  "CMAKE_CUDA_ARCHITECTURES[ \"]+(native|all|all-major)|3.23"
  "if[ ]*\\([^)]*PATH_EQUAL|3.24"
  "DOWNLOAD_EXTRACT_TIMESTAMP|3.24"
  "COMPILE_WARNING_AS_ERROR|3.24"
  "FILE_SET|3.23"
  "VERIFY_INTERFACE_HEADER_SETS|3.24"
  "CXX_MODULE|3.28"
  "file[ ]*\\([ ]*ARCHIVE_CREATE[^)]*COMPRESSION_LEVEL[^)]*ZSTD|3.26"
  "EXCLUDE_FROM_ALL[^)]*\\)[^\\n]*FetchContent|3.28"
  "cmake_minimum_required[ ]*\\([ ]*VERSION[ ]+3\\.(2[3-9]|[3-9][0-9])|3.23+"
  "cmake_minimum_required[ ]*\\([ ]*VERSION[ ]+[4-9]|4.0")

file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/CMakeLists.txt" "${ROOT}/*.cmake"
     "${ROOT}/*/CMakeLists.txt")
set(problems "")
foreach(file IN LISTS files)
  if(file MATCHES "^(build|\\.cudalings|\\.git)[/-]" OR file MATCHES "/_deps/" OR
     file STREQUAL "cmake/CheckCMake322.cmake")
    continue()
  endif()
  file(READ "${ROOT}/${file}" text)
  # Comments do not count.
  string(REGEX REPLACE "#[^\n]*" "" text "${text}")
  foreach(entry IN LISTS newer)
    string(REGEX REPLACE "\\|[^|]*$" "" pattern "${entry}")
    string(REGEX REPLACE "^.*\\|" "" version "${entry}")
    if(text MATCHES "${pattern}")
      string(APPEND problems "  ${file}: \"${CMAKE_MATCH_0}\" needs CMake ${version}\n")
    endif()
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "CMake newer than 3.22 is needed by:\n${problems}")
endif()
list(LENGTH files count)
message(STATUS "${count} CMake files use nothing newer than CMake 3.22")
