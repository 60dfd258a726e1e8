# Checks gpuprofCudaArchitectures.cmake's choice against fake nvidia-smi
# answers, so it runs without a GPU:
#   cmake -DNVCC=/path/to/nvcc -DWORK=scratch-dir -P cuda_architectures_test.cmake
# Each case runs in a child `cmake -P` whose PATH holds only the fake, so
# find_program searches afresh and never finds a real nvidia-smi.
cmake_minimum_required(VERSION 3.25)

if(DEFINED ONE_CASE)
  if(DEFINED GIVEN)  # as -DCMAKE_CUDA_ARCHITECTURES would give it (commas: one argument)
    string(REPLACE "," ";" CMAKE_CUDA_ARCHITECTURES "${GIVEN}")
  endif()
  set(CMAKE_CUDA_COMPILER "${NVCC}")
  set(GPUPROF_BUILD_EXAMPLES ON)
  include(${CMAKE_CURRENT_LIST_DIR}/../gpuprofCudaArchitectures.cmake)
  gpuprof_choose_cuda_architectures()
  gpuprof_report_cuda_architectures()
  message("chosen=[${CMAKE_CUDA_ARCHITECTURES}|${GPUPROF_EXAMPLE_CUDA_ARCHITECTURES}]")
  return()
endif()

foreach(required NVCC WORK)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "usage: cmake -DNVCC=nvcc -DWORK=dir -P ${CMAKE_CURRENT_LIST_FILE}")
  endif()
endforeach()

set(failures 0)
# check(NAME SCRIPT EXPECTED_REGEX [cmake -D args]): SCRIPT is the fake
# nvidia-smi's shell body, or "" for no nvidia-smi at all; the regex matches
# "everything's architectures|the examples' architectures".
function(check name script expected)
  set(bin ${WORK}/${name})
  file(REMOVE_RECURSE ${bin})
  file(MAKE_DIRECTORY ${bin})
  if(NOT script STREQUAL "")
    file(WRITE ${bin}/nvidia-smi "#!/bin/sh\n${script}\n")
    file(CHMOD ${bin}/nvidia-smi PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env PATH=${bin}
            ${CMAKE_COMMAND} -DNVCC=${NVCC} -DONE_CASE=1 ${ARGN} -P ${CMAKE_CURRENT_FUNCTION_LIST_FILE}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
  string(REGEX MATCH "chosen=\\[([^]]*)\\]" found "${err}")
  set(chosen "${CMAKE_MATCH_1}")
  if(status EQUAL 0 AND found AND chosen MATCHES "${expected}")
    message(STATUS "ok   ${name}: ${chosen}")
  else()
    message(STATUS "FAIL ${name}: got [${chosen}] (status ${status}), want ${expected}\n${out}${err}")
    math(EXPR failures "${failures} + 1")
    set(failures ${failures} PARENT_SCOPE)
  endif()
endfunction()

set(default "80-virtual;90")
check(hopper "printf '9.0\\n9.0\\n'" "^90\\|90$")
check(mixed_with_turing "printf '8.6\\n7.5\\n'" "^86;75\\|86$")
check(only_turing "printf '7.5\\n'" "^75\\|${default}$")
check(newer_than_nvcc "printf '99.0\\n'" "^([0-9]+-virtual)\\|[0-9]+-virtual$")
check(no_nvidia_smi "" "^${default}\\|${default}$")
check(nvidia_smi_fails "echo 'NVIDIA-SMI has failed'; exit 9" "^${default}\\|${default}$")
check(given_wins "printf '9.0\\n'" "^86\\|86$" -DGIVEN=86)
check(given_below_80 "printf '9.0\\n'" "^75;86\\|86$" -DGIVEN=75,86)

if(failures)
  message(FATAL_ERROR "${failures} case(s) failed")
endif()
