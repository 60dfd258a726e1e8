# The HTML report in a real browser: writes the synthetic report, turns it
# into a page with gpuprof-report, loads the page in headless Chromium and
# checks that it drew (body data-render-status="ok", no script error), that
# the icicle chart has one element per scope, that the counter table and the
# roofline are there, and that the console stayed quiet. Keeps a screenshot beside the page in the build folder.
#   cmake -DFIXTURE=... -DREPORT_TOOL=... -DBROWSER=... -DOUT_DIR=... -P html_browser_test.cmake
# Without a browser found at configure time it fails with a "SKIPPED:" line,
# which the test's SKIP_REGULAR_EXPRESSION reports as skipped (an exit code
# of our choosing, cmake_language(EXIT), needs CMake 3.29; Debian 12 has 3.25).
if(NOT BROWSER)
  message(FATAL_ERROR "SKIPPED: no chromium found (apt-get install chromium); the HTML page was not checked in a browser")
endif()
file(MAKE_DIRECTORY "${OUT_DIR}")
set(json "${OUT_DIR}/report.json")
set(page "${OUT_DIR}/report.html")

execute_process(COMMAND "${FIXTURE}" "${json}" OUTPUT_VARIABLE scopes RESULT_VARIABLE status
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "fixture failed (${status})")
endif()
execute_process(COMMAND "${REPORT_TOOL}" "${json}" -o "${page}" RESULT_VARIABLE status ERROR_VARIABLE error)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gpuprof-report failed (${status}): ${error}")
endif()

# Root in a container needs --no-sandbox; a private profile keeps runs apart.
set(flags --headless --no-sandbox --disable-gpu --no-first-run --disable-extensions
          --user-data-dir=${OUT_DIR}/browser-profile --window-size=1300,1900)
execute_process(COMMAND "${BROWSER}" ${flags} --enable-logging=stderr --v=0 --dump-dom "file://${page}"
                OUTPUT_VARIABLE dom ERROR_VARIABLE log RESULT_VARIABLE status TIMEOUT 90)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${BROWSER} --dump-dom failed (${status}):\n${log}")
endif()
file(WRITE "${OUT_DIR}/report.dom.html" "${dom}")

set(failures "")
if(NOT dom MATCHES "data-render-status=\"ok\"")
  string(APPEND failures "the page did not finish drawing (no data-render-status=\"ok\")\n")
endif()
if(dom MATCHES "data-render-error=\"([^\"]*)\"")
  string(APPEND failures "script error: ${CMAKE_MATCH_1}\n")
endif()
# Chromium logs every console message as "...:CONSOLE(line)] message".
string(REGEX MATCHALL "[^\n]*CONSOLE[^\n]*" console "${log}")
if(console)
  string(APPEND failures "console messages:\n${console}\n")
endif()
string(REGEX MATCHALL "class=\"flame-node[ \"]" flame_nodes "${dom}")
list(LENGTH flame_nodes drawn)
if(NOT drawn EQUAL scopes)
  string(APPEND failures "icicle chart has ${drawn} scope elements, the report has ${scopes} scopes\n")
endif()
foreach(part "id=\"memory-allocations\"" "id=\"memory-in-use\"" "class=\"allocation\"" "sm90_xmma_gemm_bf16"
             "Hardware counters" "<td class=\"name\">compute</td>" "<td class=\"name\">memory</td>"
             "<h2>Roofline</h2>" "class=\"point scope\" data-name=\"step/forward/mlp\"")
  string(FIND "${dom}" "${part}" at)
  if(at EQUAL -1)
    string(APPEND failures "the page lacks ${part}\n")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "HTML report check failed:\n${failures}(DOM kept in ${OUT_DIR}/report.dom.html)")
endif()

execute_process(COMMAND "${BROWSER}" ${flags} --hide-scrollbars "--screenshot=${OUT_DIR}/report.png" "file://${page}"
                OUTPUT_QUIET ERROR_VARIABLE log RESULT_VARIABLE status TIMEOUT 90)
if(NOT status EQUAL 0 OR NOT EXISTS "${OUT_DIR}/report.png")
  message(FATAL_ERROR "screenshot failed (${status}):\n${log}")
endif()
message("HTML report drawn with ${drawn} scopes; page and screenshot in ${OUT_DIR}")
