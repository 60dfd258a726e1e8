# Kernel capture (cupti.hpp), its joins and summaries (kernel_summary*.hpp,
# kernel_names.hpp) and memory peaks (memory.hpp). Joins, summaries, writers
# and the peak bookkeeping are pure host code: CPU tests in the shared binary.
# Capture itself needs a GPU: its own binary, label `gpu` (skipped without one).
target_sources(gpuprof_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kernels/cupti_launch_apis_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels/kernel_aggregates_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels/kernel_names_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels/kernel_summary_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/kernels/launch_attribution_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/memory/memory_peaks_test.cpp)

if(GPUPROF_HAVE_CUDA AND CMAKE_CUDA_COMPILER)
  add_executable(gpuprof_kernel_capture_tests ${CMAKE_CURRENT_LIST_DIR}/kernels/kernel_capture_gpu_test.cu)
  target_link_libraries(gpuprof_kernel_capture_tests PRIVATE gpuprof::cupti gpuprof_gpu_test_main)
  gpuprof_strict_warnings(gpuprof_kernel_capture_tests)
  gpuprof_add_gpu_test(gpuprof_kernel_capture_tests gpuprof_kernel_capture_tests)
  gpuprof_add_gpu_test(gpuprof_kernel_capture_records gpuprof_kernel_capture_tests)
  set_tests_properties(gpuprof_kernel_capture_records PROPERTIES ENVIRONMENT GPUPROF_TEST_CAPTURE_ROUTE=records)
endif()

# The notice of a capture that cannot capture, on any machine: no device is
# made visible, so the GPU machine runs the same case as CI (a CPU test).
if(TARGET gpuprof::cupti)
  add_executable(gpuprof_capture_notice_test ${CMAKE_CURRENT_LIST_DIR}/kernels/capture_notice_test.cpp)
  target_link_libraries(gpuprof_capture_notice_test PRIVATE gpuprof::cupti gpuprof_test_main)
  target_include_directories(gpuprof_capture_notice_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  gpuprof_strict_warnings(gpuprof_capture_notice_test)
  add_test(NAME gpuprof_capture_notice COMMAND gpuprof_capture_notice_test)
  set_tests_properties(gpuprof_capture_notice PROPERTIES ENVIRONMENT CUDA_VISIBLE_DEVICES=-1)
endif()
