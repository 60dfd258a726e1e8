# Comparing runs (compare.hpp, gpuprof-compare), where a run happened
# (environment.hpp), reports read back (report/read_json.hpp) and the HTML
# page (report/html.hpp, gpuprof-report; drawn in a headless browser where
# one is installed).
target_sources(gpuprof_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/test_compare.cpp)
if(TARGET gpuprof_compare)
  target_compile_definitions(gpuprof_tests PRIVATE GPUPROF_COMPARE_TOOL="$<TARGET_FILE:gpuprof_compare>")
  add_dependencies(gpuprof_tests gpuprof_compare)
endif()
