# Statistics (stats.hpp) and the report writers (report/*.hpp, json_writer.hpp,
# atomic_file.hpp): CPU-only tests in the shared doctest binary.
target_sources(gpuprof_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/reports/stats_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/report_writers_test.cpp)
