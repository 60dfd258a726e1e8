# Helpers shared by every test and example folder of this repository (not
# installed: consumers of the package never see them).

# Warnings we hold our own code to. Not put on the gpuprof target itself: a
# consumer's flags are the consumer's business.
function(gpuprof_strict_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
endfunction()

# A test that needs a GPU. Its program exits with 77 only where no GPU can
# exist (no driver, or no device: tests/support/gpu_probe.hpp decides, and
# GPUPROF_REQUIRE_GPU=1 makes even that a failure), and ctest then reports
# it as skipped, never as passed. The `gpu` label selects these tests on the
# device machine (`ctest -L gpu`).
#   gpuprof_add_gpu_test(name [SHARES_GPU] command args...)
# A GPU test runs alone (RUN_SERIAL) under `ctest -j`: timings, memory
# high-water marks and counters must not see another process's work.
# SHARES_GPU marks a test that checks only values (a kernel against its CPU
# reference), which may share the GPU with others.
set(GPUPROF_SKIP_RETURN_CODE 77)
function(gpuprof_add_gpu_test name)
  set(command ${ARGN})
  set(run_serial TRUE)
  if(ARGV1 STREQUAL "SHARES_GPU")
    list(POP_FRONT command)
    set(run_serial FALSE)
  endif()
  add_test(NAME ${name} COMMAND ${command})
  set_tests_properties(${name} PROPERTIES
    LABELS gpu
    RUN_SERIAL ${run_serial}
    SKIP_RETURN_CODE ${GPUPROF_SKIP_RETURN_CODE})
endfunction()

# A command-line test that checks the exit status and parses what the program
# wrote (tests/cli/run_and_check.cmake says what each option checks):
#   gpuprof_add_cli_test(NAME n PROGRAM $<TARGET_FILE:p> EXIT 0 ARGS --json -
#                        STDOUT_JSON CHECKS "schema=^x$" "rows#=^1$")
# Lists are passed through as "|"-joined text: keep "|" out of the values.
set(GPUPROF_RUN_AND_CHECK ${CMAKE_CURRENT_LIST_DIR}/../tests/cli/run_and_check.cmake)
function(gpuprof_add_cli_test)
  cmake_parse_arguments(cli "STDOUT_JSON" "NAME;PROGRAM;EXIT;JSON_FILE;STDOUT_REGEX;STDERR_REGEX;WORKING_DIRECTORY"
                        "ARGS;CHECKS;ENV;ABSENT" ${ARGN})
  set(defines -DPROGRAM=${cli_PROGRAM} -DEXIT=${cli_EXIT} -DSTDOUT_JSON=${cli_STDOUT_JSON})
  foreach(list ARGS CHECKS ENV ABSENT)
    if(DEFINED cli_${list})
      list(JOIN cli_${list} "|" joined)
      list(APPEND defines "-D${list}=${joined}")
    endif()
  endforeach()
  foreach(single JSON_FILE STDOUT_REGEX STDERR_REGEX WORKING_DIRECTORY)
    if(DEFINED cli_${single})
      list(APPEND defines "-D${single}=${cli_${single}}")
    endif()
  endforeach()
  if(DEFINED cli_WORKING_DIRECTORY)
    file(MAKE_DIRECTORY ${cli_WORKING_DIRECTORY})
  endif()
  add_test(NAME ${cli_NAME} COMMAND ${CMAKE_COMMAND} ${defines} -P ${GPUPROF_RUN_AND_CHECK})
endfunction()

# The README's promise for every program: `--help` prints the usage (which
# names --help itself) on standard output and exits 0, before any work and
# without a device (none is made visible), as <target>_help.
function(gpuprof_add_help_test target)
  gpuprof_add_cli_test(NAME ${target}_help PROGRAM $<TARGET_FILE:${target}> EXIT 0 ARGS --help
    ENV CUDA_VISIBLE_DEVICES=-1 STDOUT_REGEX "--help")
endfunction()

# A program that needs a GPU, run where none is visible (the same on every
# machine): a message naming why and exit status 3, the README's "no usable
# GPU", as <target>_no_gpu. ARGS: a command line that would otherwise run.
function(gpuprof_add_no_gpu_test target)
  gpuprof_add_cli_test(NAME ${target}_no_gpu PROGRAM $<TARGET_FILE:${target}> EXIT 3 ARGS ${ARGN}
    ENV CUDA_VISIBLE_DEVICES=-1 STDERR_REGEX "no usable (GPU|CUDA device)")
endfunction()

# Two tests that standard output which cannot be written is exit status 1
# with a message, not 0: <prefix>_stdout_full (>/dev/full) and
# <prefix>_stdout_closed (>&-), each running `program args...`.
function(gpuprof_add_stdout_failure_tests prefix program)
  foreach(stdout_case "full|>/dev/full" "closed|>&-")
    string(REPLACE "|" ";" stdout_case "${stdout_case}")
    list(GET stdout_case 0 name)
    list(GET stdout_case 1 redirect)
    add_test(NAME ${prefix}_stdout_${name}
      COMMAND sh -c "\"$0\" \"$@\" 2>&1 ${redirect} | grep -q 'cannot write standard output' && { \"$0\" \"$@\" ${redirect} 2>/dev/null; test $? -eq 1; }"
              ${program} ${ARGN})
  endforeach()
endfunction()
