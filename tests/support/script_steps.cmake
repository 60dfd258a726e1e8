# What the tests' cmake -P scripts share: checking their -D arguments and
# running one step of a build, failing with its output.

# gpuprof_require_defined(<script name> <variable>...): each must be given with -D.
function(gpuprof_require_defined script)
  foreach(variable IN LISTS ARGN)
    if(NOT DEFINED ${variable})
      message(FATAL_ERROR "${script}: -D${variable}=... is required")
    endif()
  endforeach()
endfunction()

# run_step(<description> <command>...): runs the command (execute_process's
# own keywords, e.g. WORKING_DIRECTORY, may follow it); fails with its output
# unless it exits 0; leaves that output in step_output.
function(run_step description)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${description} failed (${status}):\n${output}")
  endif()
  message(STATUS "${description}: ok")
  set(step_output "${output}" PARENT_SCOPE)
endfunction()
