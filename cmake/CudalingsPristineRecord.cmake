# cmake -DROOT=<course> -DRECORD=<file> -DMODE=write|check -P CudalingsPristineRecord.cmake
#   write: record the SHA-256 of every lesson file (sources and headers under lessons/)
#   check: fail when the record and the working files disagree (CI: a lesson file was changed
#          without `cmake --build build --target cudalings_pristine_update`); with
#          -DSKIP_UNLESS_CI=ON, outside CI (no CI variable) it says SKIPPED instead
cmake_minimum_required(VERSION 3.22)
set(mode "${MODE}")
file(GLOB_RECURSE files RELATIVE "${ROOT}/lessons"
     "${ROOT}/lessons/*.cu" "${ROOT}/lessons/*.cuh" "${ROOT}/lessons/*.h" "${ROOT}/lessons/*.hpp")
list(SORT files)
set(text "")
foreach(path IN LISTS files)
  file(SHA256 "${ROOT}/lessons/${path}" hash)
  string(APPEND text "${hash}  ${path}\n")
endforeach()
if(mode STREQUAL "write")
  file(WRITE "${RECORD}" "${text}")
  list(LENGTH files count)
  message(STATUS "recorded ${count} lesson files in ${RECORD}")
elseif(mode STREQUAL "check")
  set(recorded "")
  if(EXISTS "${RECORD}")
    file(READ "${RECORD}" recorded)
  endif()
  if(NOT recorded STREQUAL text AND SKIP_UNLESS_CI AND NOT DEFINED ENV{CI})
    # A learner's copy: their edits are expected; CI (a fresh checkout) is where it counts.
    message("SKIPPED: lessons/ differs from the record (your edits; CI checks the record)")
    return()
  endif()
  if(NOT recorded STREQUAL text)
    message(FATAL_ERROR "cmake/pristine-lessons.sha256 does not match lessons/ (a lesson file "
                        "changed without `./cudalings dev update` or "
                        "`cmake --build build --target cudalings_pristine_update`)")
  endif()
  message(STATUS "the record matches every lesson file")
else()
  message(FATAL_ERROR "usage: cmake -DROOT=... -DRECORD=... -DMODE=write|check -P CudalingsPristineRecord.cmake")
endif()
