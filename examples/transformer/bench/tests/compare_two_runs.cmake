# Two transformer_bench runs compared by gpuprof-compare: the bench writes
# gpuprof.bench, so the tool reads it with no knowledge of the example.
#
#   cmake -DBENCH=path -DCOMPARE=path -DWORK=dir "-DARGS=--device|cpu|..."
#         "-DSWEEP_ARGS=--device|cpu|..." -P compare_two_runs.cmake
#
# Passes when both runs exit 0 and gpuprof-compare gives every configuration
# a verdict from the samples (exit 0, or 1 should the machine's load make the
# second run slower: either is a comparison; 2 is an unreadable file). The
# OOM row of a third pair must compare as "not measured" with its reason.
# Then two sweeps (SWEEP_ARGS plus --ctx and --mode lists) that list their
# contexts in opposite orders, the new one with a mode more: the rows of
# each point are matched by their axis values, the extra mode's rows are
# "only in new".
foreach(required BENCH COMPARE WORK ARGS SWEEP_ARGS)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "compare_two_runs.cmake: ${required} is required")
  endif()
endforeach()
string(REPLACE "|" ";" args "${ARGS}")
string(REPLACE "|" ";" sweep_args "${SWEEP_ARGS}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# bench_run(OUT ARG...): transformer_bench with these arguments, its JSON to WORK/OUT.
function(bench_run out)
  execute_process(COMMAND "${BENCH}" ${ARGN} --json "${WORK}/${out}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "transformer_bench ${ARGN} exited with ${status}:\n${output}")
  endif()
endfunction()

# compare_files(BASE NEW REGEX WHAT): gpuprof-compare of two files in WORK,
# whose table must match REGEX (else "WHAT" fails the test).
function(compare_files base new regex what)
  execute_process(COMMAND "${COMPARE}" "${WORK}/${base}" "${WORK}/${new}"
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  if(NOT status MATCHES "^[01]$")
    message(FATAL_ERROR "gpuprof-compare exited with ${status}:\n${output}${errors}")
  endif()
  if(NOT output MATCHES "${regex}")
    message(FATAL_ERROR "${what}:\n${output}")
  endif()
  message(STATUS "${output}")
endfunction()

# compare_runs(BATCH REGEX WHAT): two runs of ARGS at BATCH, compared.
function(compare_runs batch regex what)
  bench_run(base-${batch}.json ${args} --batch ${batch})
  bench_run(new-${batch}.json ${args} --batch ${batch})
  compare_files(base-${batch}.json new-${batch}.json "${regex}" "${what}")
endfunction()

set(fwd_16 "lm\\[size=tiny,ctx=16,mode=fwd,precision=fp32,attention=naive\\]")
set(verdict_from_samples " +[0-9.]+ \\(n=5\\) +[0-9.]+ \\(n=5\\)[^\n]*\\(U\\) +(same|faster|slower|noisy)")
compare_runs(1 "${fwd_16}${verdict_from_samples}" "no Mann-Whitney verdict on the ctx 16 row from 5 samples a side")
compare_runs(1000000000 "${fwd_16}[^\n]*not measured +base: OOM \\(needs [0-9.]+ GiB"
             "the OOM row is not 'not measured' with its reason")

bench_run(sweep-base.json ${sweep_args} --ctx 16,32 --mode fwd)
bench_run(sweep-new.json ${sweep_args} --ctx 32,16 --mode fwd,fwdbwd)
set(fwd_32 "lm\\[size=tiny,ctx=32,mode=fwd,precision=fp32,attention=naive\\]")
set(fwdbwd "lm\\[size=tiny,ctx=(16|32),mode=fwdbwd,precision=fp32,attention=naive\\] +- +[0-9.]+ \\(n=5\\)")
compare_files(sweep-base.json sweep-new.json
              "${fwd_16}${verdict_from_samples}.*${fwd_32}${verdict_from_samples}.*${fwdbwd}[^\n]*only in new.*${fwdbwd}[^\n]*only in new.*2 only in new"
              "two sweeps are not matched point by point")
