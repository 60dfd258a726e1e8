# Statistics (stats.hpp), tables (table.hpp) and the report writers (report/*.hpp, json_writer.hpp,
# atomic_file.hpp): CPU-only tests in the shared doctest binary.
target_sources(gpuprof_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/reports/stats_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/online_summary_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/report_writers_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/atomic_file_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/diagnostics_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/output_paths_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/table_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/write_by_extension_test.cpp)

# The same cases through a command-line program: exit status, messages, and
# what is left on disk.
add_executable(gpuprof_write_report reports/report_cli/write_report.cpp)
target_link_libraries(gpuprof_write_report PRIVATE gpuprof::gpuprof)
gpuprof_strict_warnings(gpuprof_write_report)
add_test(NAME gpuprof_report_output_paths
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/reports/report_cli/output_paths.sh $<TARGET_FILE:gpuprof_write_report>)
