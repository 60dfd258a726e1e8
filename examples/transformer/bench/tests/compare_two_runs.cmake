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

function(bench_run out)
  execute_process(COMMAND "${BENCH}" ${args} ${ARGN} --json "${WORK}/${out}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "transformer_bench ${ARGN} exited with ${status}:\n${output}")
  endif()
endfunction()

# compare(BASE NEW VAR): gpuprof-compare's standard output, after checking its status.
function(compare base new var)
  execute_process(COMMAND "${COMPARE}" "${WORK}/${base}" "${WORK}/${new}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(NOT status MATCHES "^[01]$")
    message(FATAL_ERROR "gpuprof-compare exited with ${status}:\n${output}${errors}")
  endif()
  set(${var} "${output}" PARENT_SCOPE)
endfunction()

bench_run(base.json --batch 1)
bench_run(new.json --batch 1)
compare(base.json new.json output)
if(NOT output MATCHES "fwd/tiny/ctx16/fp32/naive +[0-9.]+ \\(n=5\\) +[0-9.]+ \\(n=5\\)[^\n]*\\(U\\) +(same|faster|slower|noisy)")
  message(FATAL_ERROR "no Mann-Whitney verdict on fwd/tiny/ctx16/fp32/naive from 5 samples a side:\n${output}")
endif()

bench_run(oom_base.json --batch 1000000000)
bench_run(oom_new.json --batch 1000000000)
compare(oom_base.json oom_new.json output)
if(NOT output MATCHES "fwd/tiny/ctx16/fp32/naive[^\n]*not measured +base: OOM \\(needs [0-9.]+ GiB")
  message(FATAL_ERROR "the OOM row is not 'not measured' with its reason:\n${output}")
endif()
message(STATUS "${output}")
