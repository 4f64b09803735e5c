# Every skeleton of the course must fail under emulation: WRONG (or another failing verdict),
# never PASS, never INTERNAL_ERROR. Steps whose checks are GPU-only are SKIPPED and allowed.
execute_process(COMMAND "${CUDALINGS}" --root "${ROOT}" --state-dir "${STATE}" --json
                        check --all --emulate
                OUTPUT_VARIABLE out RESULT_VARIABLE code)
string(JSON count LENGTH "${out}" results)
math(EXPR last "${count} - 1")
set(bad "")
foreach(i RANGE ${last})
  string(JSON step GET "${out}" results ${i} step)
  string(JSON verdict GET "${out}" results ${i} verdict)
  if(verdict STREQUAL "PASS" OR verdict STREQUAL "INTERNAL_ERROR" OR verdict STREQUAL "COMPILE_ERROR")
    string(APPEND bad "  ${step}: ${verdict}\n")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "skeletons that did not fail under emulation:\n${bad}")
endif()
message(STATUS "${count} skeleton steps checked under emulation; none passed")
