# Dependencies: system packages first (find_package), FetchContent only where one is missing.
# Nothing is vendored.
include(FetchContent)

find_package(CUDAToolkit REQUIRED)

macro(cudalings_find_or_fetch name)
  cmake_parse_arguments(ARG "" "GIT_REPOSITORY;GIT_TAG;VERSION" "" ${ARGN})
  find_package(${name} ${ARG_VERSION} QUIET CONFIG)
  if(${name}_FOUND)
    message(STATUS "cudalings: using system ${name} ${${name}_VERSION}")
  else()
    message(STATUS "cudalings: ${name} not found, fetching ${ARG_GIT_TAG}")
    FetchContent_Declare(${name} GIT_REPOSITORY ${ARG_GIT_REPOSITORY} GIT_TAG ${ARG_GIT_TAG}
                         GIT_SHALLOW TRUE)
    FetchContent_MakeAvailable(${name})
  endif()
endmacro()

cudalings_find_or_fetch(CLI11 VERSION 2.1
  GIT_REPOSITORY https://github.com/CLIUtils/CLI11.git GIT_TAG v2.4.2)
cudalings_find_or_fetch(nlohmann_json VERSION 3.10
  GIT_REPOSITORY https://github.com/nlohmann/json.git GIT_TAG v3.11.3)
if(CUDALINGS_BUILD_TESTS)
  cudalings_find_or_fetch(Catch2 VERSION 3.3
    GIT_REPOSITORY https://github.com/catchorg/Catch2.git GIT_TAG v3.7.1)
  if(TARGET Catch2::Catch2WithMain AND NOT COMMAND catch_discover_tests)
    # The fetched copy keeps its CMake helpers under extras/.
    list(APPEND CMAKE_MODULE_PATH "${catch2_SOURCE_DIR}/extras")
  endif()
  include(Catch)
endif()
