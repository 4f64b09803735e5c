# Every solution of the course must pass under emulation: PASS, or SKIPPED only where the step
# cannot be emulated at all (it includes CUB, Thrust or libcu++, or uses inline PTX: the
# checker says "it cannot be emulated"). Anything else fails the test, with the steps named; so
# does a solution that misses its step's performance goals.
# PART of PARTS: the lessons are dealt round-robin into PARTS tests (CTest entries of their own,
# each well inside CTest's time limit on CI's two cores).
include("${CMAKE_CURRENT_LIST_DIR}/course_parts.cmake")
course_part_lessons("${ROOT}" "${PART}" "${PARTS}" lessons)
set(bad "")
set(skipped 0)
set(count 0)
foreach(lesson IN LISTS lessons)
  execute_process(COMMAND "${CUDALINGS}" --root "${ROOT}" --state-dir "${STATE}" --json
                          check "${lesson}" --solutions --emulate
                  OUTPUT_VARIABLE out RESULT_VARIABLE code)
  string(JSON steps LENGTH "${out}" results)
  math(EXPR last "${steps} - 1")
  math(EXPR count "${count} + ${steps}")
  foreach(i RANGE ${last})
    string(JSON step GET "${out}" results ${i} step)
    string(JSON verdict GET "${out}" results ${i} verdict)
    string(JSON reason GET "${out}" results ${i} reason)
    if(verdict STREQUAL "SKIPPED" AND reason MATCHES "cannot be emulated")
      math(EXPR skipped "${skipped} + 1")
    elseif(NOT verdict STREQUAL "PASS")
      string(APPEND bad "  ${step}: ${verdict} ${reason}\n")
    endif()
    # A solution meets its step's performance goals (lesson.json "goals"): a goal that names an
    # array the emulator does not see by that name, or that the reference misses, is a mistake.
    string(JSON goals ERROR_VARIABLE no_goals LENGTH "${out}" results ${i} goals)
    if(NOT no_goals AND goals GREATER 0)
      math(EXPR last_goal "${goals} - 1")
      foreach(g RANGE ${last_goal})
        string(JSON met GET "${out}" results ${i} goals ${g} met)
        if(NOT met)
          string(JSON says GET "${out}" results ${i} goals ${g} says)
          string(JSON evidence GET "${out}" results ${i} goals ${g} evidence)
          string(APPEND bad "  ${step}: goal not met: ${says} (${evidence})\n")
        endif()
      endforeach()
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "solutions that did not pass under emulation:\n${bad}")
endif()
message(STATUS "${count} solution steps of ${lessons} under emulation: all passed, "
               "${skipped} not emulable")
