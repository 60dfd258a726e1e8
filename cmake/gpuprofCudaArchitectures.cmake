# Which GPU architectures the tests' and examples' device code is built for.
# Included before enable_language(CUDA), which reads CMAKE_CUDA_ARCHITECTURES.
#
#   1. Given (-DCMAKE_CUDA_ARCHITECTURES=..., or the CUDAARCHS environment
#      variable CMake reads): used as given.
#   2. Else the GPUs nvidia-smi sees: their architectures, like CMake's
#      `native`. Not `native` itself: CMake 3.25 stops the configure when its
#      probe finds no GPU, and nvidia-smi's answer can be checked first.
#   3. Else (no GPU: CI, a cluster's login node) GPUPROF_NO_GPU_ARCHITECTURES:
#      machine code for Hopper plus sm_80 PTX, which the driver compiles on
#      first use for any card from sm_80 on (docs/gpus.md).
#
# The examples' kernels need sm_80 (bf16 mma.sync, cp.async, ldmatrix): they
# get the entries from 80 up (GPUPROF_EXAMPLE_CUDA_ARCHITECTURES, which
# examples/CMakeLists.txt applies), or (3)'s list when none is left; the
# library and its tests keep the whole list. The CUDA backend refuses a card
# below sm_80 at run time and names the CPU backend.

set(GPUPROF_NO_GPU_ARCHITECTURES "80-virtual;90" CACHE STRING
    "CMAKE_CUDA_ARCHITECTURES when none is given and no GPU is found")
set(gpuprof_min_example_architecture 80)

# nvcc's real architectures (sm_XY) as numbers XY; empty when nvcc cannot say.
function(gpuprof_nvcc_architectures out)
  execute_process(COMMAND "${CMAKE_CUDA_COMPILER}" --list-gpu-code
                  OUTPUT_VARIABLE listing RESULT_VARIABLE status ERROR_QUIET)
  set(numbers "")
  if(status EQUAL 0)
    string(REGEX MATCHALL "sm_[0-9]+" codes "${listing}")
    foreach(code IN LISTS codes)
      string(SUBSTRING "${code}" 3 -1 number)
      list(APPEND numbers ${number})
    endforeach()
  endif()
  set(${out} "${numbers}" PARENT_SCOPE)
endfunction()

# The compute capabilities of the GPUs nvidia-smi lists, as numbers (9.0 -> 90).
function(gpuprof_detected_architectures out)
  set(found "")
  find_program(GPUPROF_NVIDIA_SMI nvidia-smi)
  mark_as_advanced(GPUPROF_NVIDIA_SMI)
  if(GPUPROF_NVIDIA_SMI)
    execute_process(COMMAND "${GPUPROF_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE listing RESULT_VARIABLE status ERROR_QUIET TIMEOUT 20)
    if(status EQUAL 0)
      string(REGEX MATCHALL "[0-9]+\\.[0-9]+" capabilities "${listing}")
      foreach(capability IN LISTS capabilities)
        string(REPLACE "." "" number "${capability}")
        list(APPEND found ${number})
      endforeach()
      list(REMOVE_DUPLICATES found)
    endif()
  endif()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Before enable_language(CUDA): sets CMAKE_CUDA_ARCHITECTURES unless given.
macro(gpuprof_choose_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES OR DEFINED ENV{CUDAARCHS})
    set(gpuprof_architectures_from "given")
  else()
    gpuprof_detected_architectures(gpuprof_detected)
    gpuprof_nvcc_architectures(gpuprof_known)
    set(gpuprof_chosen "")
    foreach(number IN LISTS gpuprof_detected)
      if(gpuprof_known AND NOT number IN_LIST gpuprof_known)
        # A card newer than this nvcc: PTX of the newest architecture nvcc
        # has below it runs there once the driver compiles it.
        set(newest 0)
        foreach(known IN LISTS gpuprof_known)
          if(known GREATER newest AND NOT known GREATER number)
            set(newest ${known})
          endif()
        endforeach()
        message(STATUS "GPU sm_${number} is unknown to this nvcc: building sm_${newest} PTX for it")
        list(APPEND gpuprof_chosen ${newest}-virtual)
      else()
        list(APPEND gpuprof_chosen ${number})
      endif()
    endforeach()
    if(gpuprof_chosen)
      set(CMAKE_CUDA_ARCHITECTURES "${gpuprof_chosen}")
      set(gpuprof_architectures_from "the GPUs present")
    else()
      set(CMAKE_CUDA_ARCHITECTURES "${GPUPROF_NO_GPU_ARCHITECTURES}")
      set(gpuprof_architectures_from "no GPU to build for: GPUPROF_NO_GPU_ARCHITECTURES")
    endif()
  endif()
endmacro()

# After enable_language(CUDA), when CUDAARCHS has been read too: says what
# was chosen and sets GPUPROF_EXAMPLE_CUDA_ARCHITECTURES. Entries without a
# number (all, native) are kept: what they hold is CMake's to expand.
macro(gpuprof_report_cuda_architectures)
  message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES} (${gpuprof_architectures_from})")
  set(GPUPROF_EXAMPLE_CUDA_ARCHITECTURES "")
  foreach(entry IN LISTS CMAKE_CUDA_ARCHITECTURES)
    if(NOT (entry MATCHES "^([0-9]+)" AND CMAKE_MATCH_1 LESS gpuprof_min_example_architecture))
      list(APPEND GPUPROF_EXAMPLE_CUDA_ARCHITECTURES ${entry})
    endif()
  endforeach()
  if(NOT GPUPROF_EXAMPLE_CUDA_ARCHITECTURES)
    set(GPUPROF_EXAMPLE_CUDA_ARCHITECTURES "${GPUPROF_NO_GPU_ARCHITECTURES}")
  endif()
  if(GPUPROF_BUILD_EXAMPLES AND NOT GPUPROF_EXAMPLE_CUDA_ARCHITECTURES STREQUAL CMAKE_CUDA_ARCHITECTURES)
    message(STATUS "Examples' CUDA architectures: ${GPUPROF_EXAMPLE_CUDA_ARCHITECTURES} (their "
                   "kernels need sm_80 or newer; on older cards the transformer runs --device cpu)")
  endif()
endmacro()
