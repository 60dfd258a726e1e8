# Hardware counters (counters.hpp). Merging the values (counter_data.hpp),
# joining the metric groups of a scope measurement,
# what a capture adds to a report and the table of ceilings are plain data:
# in the shared CPU binary. The host-side metric evaluator needs
# CUPTI but no GPU: a CPU test. Collection needs a GPU: label `gpu`.
target_sources(gpuprof_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/counters/counter_merge_test.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/counters/counter_groups_test.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/counters/counter_contribution_test.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/counters/device_ceilings_test.cpp)
if(TARGET gpuprof_cupti)
  add_executable(gpuprof_counter_host_tests ${CMAKE_CURRENT_LIST_DIR}/counters/counter_host_test.cpp)
  target_link_libraries(gpuprof_counter_host_tests PRIVATE gpuprof::cupti gpuprof_test_main)
  gpuprof_strict_warnings(gpuprof_counter_host_tests)
  add_test(NAME gpuprof_counter_host COMMAND gpuprof_counter_host_tests)
endif()
if(GPUPROF_HAVE_CUDA AND CMAKE_CUDA_COMPILER AND TARGET gpuprof_cupti)
  add_executable(gpuprof_counters_gpu_tests ${CMAKE_CURRENT_LIST_DIR}/counters/counters_gpu_test.cu)
  target_link_libraries(gpuprof_counters_gpu_tests PRIVATE gpuprof::cupti gpuprof_gpu_test_main CUDA::cublas)
  gpuprof_strict_warnings(gpuprof_counters_gpu_tests)
  gpuprof_add_gpu_test(gpuprof_counters_gpu gpuprof_counters_gpu_tests)
  # Prints every metric per scope and per kernel, for scripts/counters_check.sh.
  add_executable(gpuprof_counters_probe ${CMAKE_CURRENT_LIST_DIR}/counters/counters_probe.cu)
  target_link_libraries(gpuprof_counters_probe PRIVATE gpuprof::cupti)
  gpuprof_strict_warnings(gpuprof_counters_probe)
endif()
# scripts/counters_agreement.py (the Nsight Compute comparison) on synthetic
# files: matching, floors and exit status, without a GPU.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME counters_agreement_script COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/counters/agreement_test.py)
endif()
