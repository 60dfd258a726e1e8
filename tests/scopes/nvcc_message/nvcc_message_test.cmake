# cmake -DNVCC=... -DINCLUDE_DIR=<gpuprof include> -DCUDA_INCLUDE_DIR=... -DWORK=... -P nvcc_message_test.cmake
# nvcc without GPUPROF_WITH_CUDA must warn, naming the macro, pkg-config and
# the CMake target; GPUPROF_WITH_CUDA=0 (host timing on purpose) and =1 must
# not. Each case compiles scoped_kernel.cu and must succeed.
cmake_minimum_required(VERSION 3.25)  # the policies of a script
foreach(variable NVCC INCLUDE_DIR CUDA_INCLUDE_DIR WORK)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "nvcc_message_test.cmake: -D${variable}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK}")

function(compile_case name out)
  execute_process(COMMAND "${NVCC}" -std=c++17 -I${INCLUDE_DIR} ${ARGN} -c
                          ${CMAKE_CURRENT_LIST_DIR}/scoped_kernel.cu -o ${WORK}/${name}.o
                  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "nvcc (${name}) failed (${status}):\n${output}")
  endif()
  set(${out} "${output}" PARENT_SCOPE)
endfunction()

compile_case(undefined said)
foreach(expected "gpuprof: compiled by nvcc without GPUPROF_WITH_CUDA" "pkg-config --cflags --libs gpuprof"
                 "gpuprof::gpuprof" "GPUPROF_WITH_CUDA=0")
  string(FIND "${said}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "nvcc without GPUPROF_WITH_CUDA did not say \"${expected}\":\n${said}")
  endif()
endforeach()
string(REGEX MATCHALL "gpuprof: compiled by nvcc" times "${said}")
list(LENGTH times count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "the warning should be said once per translation unit, not ${count} times:\n${said}")
endif()

compile_case(off quiet_off -DGPUPROF_WITH_CUDA=0)
compile_case(on quiet_on -DGPUPROF_WITH_CUDA=1 -DGPUPROF_WITH_NVTX=1 -I${CUDA_INCLUDE_DIR})
foreach(case quiet_off quiet_on)
  if(${case} MATCHES "gpuprof: compiled by nvcc")
    message(FATAL_ERROR "a build that defines GPUPROF_WITH_CUDA was warned (${case}):\n${${case}}")
  endif()
endforeach()
message(STATUS "nvcc warns without GPUPROF_WITH_CUDA, and only then")
