# Multi-process runs: rank fields, merge() and its writers, communication vs
# computation (comm_overlap.hpp), and gpuprof-merge's exit status.
target_sources(gpuprof_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/ranks/comm_overlap_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/ranks/merge_test.cpp)
if(TARGET gpuprof_merge)
  target_compile_definitions(gpuprof_tests PRIVATE GPUPROF_MERGE_TOOL="$<TARGET_FILE:gpuprof_merge>")
  add_dependencies(gpuprof_tests gpuprof_merge)
endif()
