# cmake -DPROGRAM=timed_work -DCOMPARE=gpuprof-compare -DWORK_DIR=... -DPAIRS=20
#       -DSLOWDOWN_PAIRS=5 -P ab_pairs.cmake
# The verdict a CI gate sees, on this machine: PAIRS times, the same program
# run twice and compared; every pair must exit 0 with no "slower" row. Then
# SLOWDOWN_PAIRS times, the second run with 30 % more work in the timed
# region; every pair must exit 1 with the scope "slower".
# The gate's threshold is 10 %: two runs of one program on a shared 2-core CI
# machine sit up to 5.3 % apart (seen once, under ASan), an offset between
# runs that no comparison of one pair can tell from a change
# (docs/compare-and-html.md); a 30 % slowdown clears it by far. The program's
# runs are long (timed_work.cpp) so that a burst of load moves no median.
foreach(variable PROGRAM COMPARE WORK_DIR PAIRS SLOWDOWN_PAIRS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "ab_pairs.cmake: -D${variable}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

function(run_program out)
  execute_process(COMMAND "${PROGRAM}" "${out}" ${ARGN} RESULT_VARIABLE status ERROR_VARIABLE errors)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} ${out} ${ARGN} failed (${status}): ${errors}")
  endif()
endfunction()

# Compares base and new of pair `name`; sets `status` and `output` in the caller.
function(compare_pair name)
  execute_process(COMMAND "${COMPARE}" "${WORK_DIR}/${name}_base.json" "${WORK_DIR}/${name}_new.json" --threshold 10%
                  RESULT_VARIABLE compare_status OUTPUT_VARIABLE compare_output ERROR_VARIABLE compare_output)
  set(status "${compare_status}" PARENT_SCOPE)
  set(output "${compare_output}" PARENT_SCOPE)
endfunction()

set(verdicts "")
foreach(pair RANGE 1 ${PAIRS})
  run_program("${WORK_DIR}/aa${pair}_base.json")
  run_program("${WORK_DIR}/aa${pair}_new.json")
  compare_pair(aa${pair})
  string(REGEX MATCH "scope +work [^\n]*" row "${output}")
  list(APPEND verdicts "${row}")
  if(NOT status EQUAL 0 OR output MATCHES "slower")
    message(FATAL_ERROR "A/A pair ${pair}: exit ${status}, expected 0 and no \"slower\" row:\n${output}")
  endif()
endforeach()
string(REPLACE ";" "\n" verdicts "${verdicts}")
message(STATUS "${PAIRS} A/A pairs, all exit 0, none slower; their rows:\n${verdicts}")

set(verdicts "")
foreach(pair RANGE 1 ${SLOWDOWN_PAIRS})
  run_program("${WORK_DIR}/ab${pair}_base.json")
  run_program("${WORK_DIR}/ab${pair}_new.json" --slowdown 0.3)
  compare_pair(ab${pair})
  string(REGEX MATCH "scope +work [^\n]*" row "${output}")
  list(APPEND verdicts "${row}")
  if(NOT status EQUAL 1 OR NOT output MATCHES "scope +work [^\n]* slower")
    message(FATAL_ERROR "30 % slowdown, pair ${pair}: exit ${status}, expected 1 and \"work\" slower:\n${output}")
  endif()
endforeach()
string(REPLACE ";" "\n" verdicts "${verdicts}")
message(STATUS "${SLOWDOWN_PAIRS} pairs with a 30 % slowdown: all exit 1, \"work\" slower; their rows:\n${verdicts}")
