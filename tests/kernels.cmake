# Kernel capture (cupti.hpp), its joins and summaries (kernel_summary*.hpp,
# kernel_names.hpp) and memory peaks (memory.hpp). The joins, summaries,
# writers and peak bookkeeping are pure host code: CPU tests in the shared
# binary. Capture itself needs a GPU: its own binary, label `gpu`.
target_sources(gpuprof_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/test_kernel_names.cpp)
