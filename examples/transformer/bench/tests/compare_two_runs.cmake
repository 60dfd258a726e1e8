# Two transformer_bench runs compared by gpuprof-compare: the bench writes
# gpuprof.bench, so the tool reads it with no knowledge of the example.
#
#   cmake -DBENCH=path -DCOMPARE=path -DWORK=dir "-DARGS=--device|cpu|..." -P compare_two_runs.cmake
#
# Passes when both runs exit 0 and gpuprof-compare gives every configuration
# a verdict from the samples (exit 0, or 1 should the machine's load make the
# second run slower: either is a comparison; 2 is an unreadable file). The
# OOM row of a third pair must compare as "not measured" with its reason.
foreach(required BENCH COMPARE WORK ARGS)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "compare_two_runs.cmake: ${required} is required")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(bench_run out batch)
  execute_process(COMMAND "${BENCH}" ${args} --batch ${batch} --json "${WORK}/${out}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "transformer_bench --batch ${batch} exited with ${status}:\n${output}")
  endif()
endfunction()

# compare_runs(BATCH REGEX WHAT): two runs at BATCH, then gpuprof-compare,
# whose table must match REGEX (else "WHAT" fails the test).
function(compare_runs batch regex what)
  bench_run(base-${batch}.json ${batch})
  bench_run(new-${batch}.json ${batch})
  execute_process(COMMAND "${COMPARE}" "${WORK}/base-${batch}.json" "${WORK}/new-${batch}.json"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(NOT status MATCHES "^[01]$")
    message(FATAL_ERROR "gpuprof-compare exited with ${status}:\n${output}${errors}")
  endif()
  if(NOT output MATCHES "${regex}")
    message(FATAL_ERROR "${what}:\n${output}")
  endif()
  message(STATUS "${output}")
endfunction()

compare_runs(1 "fwd/tiny/ctx16/fp32/naive +[0-9.]+ \\(n=5\\) +[0-9.]+ \\(n=5\\)[^\n]*\\(U\\) +(same|faster|slower|noisy)"
             "no Mann-Whitney verdict on fwd/tiny/ctx16/fp32/naive from 5 samples a side")
compare_runs(1000000000 "fwd/tiny/ctx16/fp32/naive[^\n]*not measured +base: OOM \\(needs [0-9.]+ GiB"
             "the OOM row is not 'not measured' with its reason")
