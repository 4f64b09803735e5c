# Every skeleton of the course must fail under emulation: WRONG (or another failing verdict),
# never PASS, never INTERNAL_ERROR. Steps whose checks are GPU-only are SKIPPED and allowed.
# PART of PARTS: the lessons are dealt round-robin into PARTS tests (course_parts.cmake).
include("${CMAKE_CURRENT_LIST_DIR}/course_parts.cmake")
course_part_lessons("${ROOT}" "${PART}" "${PARTS}" lessons)
set(bad "")
set(count 0)
foreach(lesson IN LISTS lessons)
  execute_process(COMMAND "${CUDALINGS}" --root "${ROOT}" --state-dir "${STATE}" --json
                          check "${lesson}" --emulate
                  OUTPUT_VARIABLE out RESULT_VARIABLE code)
  string(JSON steps LENGTH "${out}" results)
  math(EXPR last "${steps} - 1")
  math(EXPR count "${count} + ${steps}")
  foreach(i RANGE ${last})
    string(JSON step GET "${out}" results ${i} step)
    string(JSON verdict GET "${out}" results ${i} verdict)
    if(verdict STREQUAL "PASS" OR verdict STREQUAL "INTERNAL_ERROR"
       OR verdict STREQUAL "COMPILE_ERROR")
      string(APPEND bad "  ${step}: ${verdict}\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "skeletons that did not fail under emulation:\n${bad}")
endif()
message(STATUS "${count} skeleton steps of ${lessons} checked under emulation; none passed")
