# Hostile input: the readers' limits and checks, kinds in compare, the same
# run merged twice, escaped names in text and markdown (library), and the
# same inputs through the tools (exit status 2 and the message).
target_sources(gpuprof_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/readers/hostile_input_test.cpp
                                     ${CMAKE_CURRENT_LIST_DIR}/readers/untrusted_input_test.cpp)
if(TARGET gpuprof_compare AND TARGET gpuprof_merge AND TARGET gpuprof_report)
  add_test(NAME gpuprof_hostile_tools
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/readers/hostile_tools.sh $<TARGET_FILE:gpuprof_compare>
                   $<TARGET_FILE:gpuprof_merge> $<TARGET_FILE:gpuprof_report> ${PROJECT_SOURCE_DIR}/fuzz/corpus)
  # Escaped diagnostics, strict readers, output names judged before the work,
  # a deep chain merged in proportion to its size.
  add_test(NAME gpuprof_untrusted_tools
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/readers/untrusted_tools.sh $<TARGET_FILE:gpuprof_compare>
                   $<TARGET_FILE:gpuprof_merge> $<TARGET_FILE:gpuprof_report> ${PROJECT_SOURCE_DIR}/fuzz/corpus)
endif()
