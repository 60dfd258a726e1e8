# Comparing runs (compare.hpp, gpuprof-compare), where a run happened
# (environment.hpp), reports read back (report/read_json.hpp) and the HTML
# page (report/html.hpp, gpuprof-report; drawn in a headless browser where
# one is installed) and the memory timeline's SVG (report/memory_timeline_svg.hpp).
target_sources(gpuprof_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/compare/compare_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare/compare_statistics_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare/compare_rounds_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare/ab_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare/bench_axes_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/compare/bench_clocks_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/report_html_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/memory_timeline_svg_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/roofline_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reports/trace_and_bench_files_test.cpp)
if(TARGET gpuprof_compare)
  target_compile_definitions(gpuprof_tests PRIVATE GPUPROF_COMPARE_TOOL="$<TARGET_FILE:gpuprof_compare>")
  add_dependencies(gpuprof_tests gpuprof_compare)
endif()

# The page's script and style are edited as html_page.js and html_page.css
# and embedded through a checked-in header (why: cmake/gpuprofEmbedHtmlAssets.cmake).
# The test fails while that header is stale; the target rewrites it.
set(gpuprof_html_assets ${PROJECT_SOURCE_DIR}/include/gpuprof/detail/html_page_assets.hpp)
add_test(NAME gpuprof_html_assets_in_sync
         COMMAND ${CMAKE_COMMAND} -DCHECK=${gpuprof_html_assets}
                 -P ${PROJECT_SOURCE_DIR}/cmake/gpuprofEmbedHtmlAssets.cmake)
add_custom_target(gpuprof_html_assets
                  COMMAND ${CMAKE_COMMAND} -DOUTPUT=${gpuprof_html_assets}
                          -P ${PROJECT_SOURCE_DIR}/cmake/gpuprofEmbedHtmlAssets.cmake
                  COMMENT "Embedding html_page.js and html_page.css into ${gpuprof_html_assets}")

# The page in a real browser (Debian's chromium; .ci/run installs it).
# Skipped, with a message, where no browser is installed.
if(TARGET gpuprof_report)
  add_executable(gpuprof_html_fixture ${CMAKE_CURRENT_LIST_DIR}/reports/html_fixture.cpp)
  target_link_libraries(gpuprof_html_fixture PRIVATE gpuprof::gpuprof)
  target_include_directories(gpuprof_html_fixture PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  gpuprof_strict_warnings(gpuprof_html_fixture)
  find_program(GPUPROF_BROWSER NAMES chromium chromium-browser google-chrome
               DOC "headless browser for the HTML report test")
  if(NOT GPUPROF_BROWSER)
    set(GPUPROF_BROWSER "")
  endif()
  add_test(NAME gpuprof_html_browser
           COMMAND ${CMAKE_COMMAND} -DFIXTURE=$<TARGET_FILE:gpuprof_html_fixture>
                   -DREPORT_TOOL=$<TARGET_FILE:gpuprof_report> -DBROWSER=${GPUPROF_BROWSER}
                   -DOUT_DIR=${CMAKE_CURRENT_BINARY_DIR}/html_report
                   -P ${CMAKE_CURRENT_LIST_DIR}/reports/html_browser_test.cmake)
  set_tests_properties(gpuprof_html_browser PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: no chromium found" TIMEOUT 240)
endif()

# The build's facts in reports, against this build's own configuration: the
# expected values come from CMake here, the tested ones through the
# gpuprof target (cmake/gpuprofBuildInfo.cmake).
target_sources(gpuprof_tests PRIVATE ${CMAKE_CURRENT_LIST_DIR}/reports/build_info_test.cpp)
string(TOUPPER "${CMAKE_BUILD_TYPE}" gpuprof_test_config)
string(STRIP "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${gpuprof_test_config}}" gpuprof_test_flags)
find_package(Git QUIET)
set(gpuprof_test_in_git 0)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --git-dir WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                  RESULT_VARIABLE gpuprof_test_git_status OUTPUT_QUIET ERROR_QUIET)
  if(gpuprof_test_git_status EQUAL 0)
    set(gpuprof_test_in_git 1)
  endif()
endif()
set_property(SOURCE ${CMAKE_CURRENT_LIST_DIR}/reports/build_info_test.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  "GPUPROF_TEST_BUILD_TYPE=\"${CMAKE_BUILD_TYPE}\""
  "GPUPROF_TEST_CXX_FLAGS=\"${gpuprof_test_flags}\""
  GPUPROF_TEST_IN_GIT_CHECKOUT=${gpuprof_test_in_git})

# gpuprof-compare --run as a CI gate on this machine with both cores kept
# busy: the same program as base and new, 5 runs of 3 ABBA rounds, never
# "slower"; a 30 % slowdown, 2 runs, exit 1. Label `timing`: a verdict on
# times, left out of the sanitizer presets (the tool's other tests run there).
if(TARGET gpuprof_compare)
  add_executable(gpuprof_timed_work ${CMAKE_CURRENT_LIST_DIR}/compare/timed_work.cpp)
  target_link_libraries(gpuprof_timed_work PRIVATE gpuprof::gpuprof)
  gpuprof_strict_warnings(gpuprof_timed_work)
  add_test(NAME gpuprof_compare_interleaved_gate
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/compare/interleaved_gate.sh $<TARGET_FILE:gpuprof_timed_work>
                   $<TARGET_FILE:gpuprof_compare> ${CMAKE_CURRENT_BINARY_DIR}/interleaved_gate 5)
  set_tests_properties(gpuprof_compare_interleaved_gate PROPERTIES TIMEOUT 300 RUN_SERIAL ON LABELS timing)
endif()
