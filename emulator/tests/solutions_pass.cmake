# Every solution of the course must pass under emulation: PASS, or SKIPPED only where the step
# cannot be emulated at all (it includes CUB, Thrust or libcu++, or uses inline PTX: the
# checker says "it cannot be emulated"). Anything else fails the test, with the steps named.
execute_process(COMMAND "${CUDALINGS}" --root "${ROOT}" --state-dir "${STATE}" --json
                        check --all --solutions --emulate
                OUTPUT_VARIABLE out RESULT_VARIABLE code)
string(JSON count LENGTH "${out}" results)
math(EXPR last "${count} - 1")
set(bad "")
set(skipped 0)
foreach(i RANGE ${last})
  string(JSON step GET "${out}" results ${i} step)
  string(JSON verdict GET "${out}" results ${i} verdict)
  string(JSON reason GET "${out}" results ${i} reason)
  if(verdict STREQUAL "SKIPPED" AND reason MATCHES "cannot be emulated")
    math(EXPR skipped "${skipped} + 1")
  elseif(NOT verdict STREQUAL "PASS")
    string(APPEND bad "  ${step}: ${verdict} ${reason}\n")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "solutions that did not pass under emulation:\n${bad}")
endif()
message(STATUS "${count} solution steps under emulation: all passed, ${skipped} not emulable")
