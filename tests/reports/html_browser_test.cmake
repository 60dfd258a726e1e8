# The HTML report in a real browser: writes the synthetic report, turns it
# into a page with gpuprof-report and loads the page in headless Chromium
# three times. With scripts disabled, the page must hold its content as
# static markup: the icicle chart, the statistics, counter and kernel tables,
# the roofline and the memory timeline. With scripts, the script must finish
# (body data-render-status="ok", no script error, a quiet console) and add a
# distribution per scope and sortable columns; opened at #SCOPE, it must zoom
# to that scope and show its kernels alone. Keeps a screenshot beside the
# page in the build folder.
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
# dump_dom(<name> <url> [browser flags...]): the DOM after load, in <name>,
# and the browser's log in <name>_log; kept as ${OUT_DIR}/<name>.html.
function(dump_dom name url)
  execute_process(COMMAND "${BROWSER}" ${flags} ${ARGN} --enable-logging=stderr --v=0 --dump-dom "${url}"
                  OUTPUT_VARIABLE dom ERROR_VARIABLE log RESULT_VARIABLE status TIMEOUT 90)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${BROWSER} --dump-dom ${url} failed (${status}):\n${log}")
  endif()
  file(WRITE "${OUT_DIR}/${name}.html" "${dom}")
  set(${name} "${dom}" PARENT_SCOPE)
  set(${name}_log "${log}" PARENT_SCOPE)
endfunction()

set(failures "")
# count(<out> <regex> <text>): how often <regex> matches.
function(count out regex text)
  string(REGEX MATCHALL "${regex}" found "${text}")
  list(LENGTH found n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()
macro(expect_parts dom label)
  foreach(part ${ARGN})
    string(FIND "${${dom}}" "${part}" at)
    if(at EQUAL -1)
      string(APPEND failures "${label}: the page lacks ${part}\n")
    endif()
  endforeach()
endmacro()

# Scripts off: everything but sorting, zoom and the distributions is there.
# Chromium's headless --dump-dom reads the DOM through script, so with
# --blink-settings=scriptEnabled=false it returns nothing; a copy of the page
# whose Content-Security-Policy forbids every script keeps the page's own
# script from running instead, and the console says it was blocked.
file(READ "${page}" text)
string(REPLACE "<head>" "<head>\n<meta http-equiv=\"Content-Security-Policy\" content=\"script-src 'none'\">"
       text "${text}")
file(WRITE "${OUT_DIR}/report.noscript.html" "${text}")
dump_dom(static "file://${OUT_DIR}/report.noscript.html")
if(static MATCHES "data-render-status" OR NOT static_log MATCHES "Content Security Policy")
  string(APPEND failures "without JavaScript: the script was not blocked\n")
endif()
count(drawn "class=\"flame-node[ \"]" "${static}")
count(rows "<tr data-node=\"[0-9]+\"" "${static}")
foreach(counted drawn rows)
  if(NOT ${counted} EQUAL scopes)
    string(APPEND failures "without JavaScript: ${${counted}} ${counted} scope elements, the report has ${scopes} scopes\n")
  endif()
endforeach()
expect_parts(static "without JavaScript" "id=\"statistics\"" "<td class=\"name\" data-sort=\"0\">step</td>"
  "Hardware counters" "<td class=\"name\">compute</td>" "<td class=\"name\">memory</td>"
  "<h2>Roofline</h2>" "class=\"point scope\" data-name=\"step/forward/mlp\""
  "<td class=\"name\">sm90_xmma_gemm_bf16" "<details class=\"kernels\" data-node=\"2\">"
  "class=\"allocation\"" "class=\"in-use\"" "<h3>Largest allocations</h3>")

# Scripts on: the script finishes, quietly, and adds what it adds.
dump_dom(scripted "file://${page}")
if(NOT scripted MATCHES "data-render-status=\"ok\"")
  string(APPEND failures "the script did not finish (no data-render-status=\"ok\")\n")
endif()
if(scripted MATCHES "data-render-error=\"([^\"]*)\"")
  string(APPEND failures "script error: ${CMAKE_MATCH_1}\n")
endif()
# Chromium logs every console message as "...:CONSOLE(line)] message".
string(REGEX MATCHALL "[^\n]*CONSOLE[^\n]*" console "${scripted_log}")
if(console)
  string(APPEND failures "console messages:\n${console}\n")
endif()
count(histograms "<svg class=\"histogram\"" "${scripted}")
if(NOT histograms EQUAL scopes)
  string(APPEND failures "${histograms} distributions drawn, the report has ${scopes} scopes\n")
endif()
expect_parts(scripted "with JavaScript" "<th class=\"sort\"" "<th class=\"name\">distribution</th>")

# Opened zoomed into step/forward/attention (node 2): its kernels alone.
dump_dom(zoomed "file://${page}#step/forward/attention")
expect_parts(zoomed "zoomed" "class=\"flame-node selected\"" "<details class=\"kernels\" data-node=\"2\" open=\"\">"
  "<section class=\"kernels\" data-node=\"-1\" hidden=\"\">")
if(zoomed MATCHES "<details class=\"kernels\" data-node=\"1\">")
  string(APPEND failures "zoomed: the kernels of step/forward are still shown\n")
endif()
if(failures)
  message(FATAL_ERROR "HTML report check failed:\n${failures}(DOMs kept in ${OUT_DIR}/static.html, scripted.html, zoomed.html)")
endif()

execute_process(COMMAND "${BROWSER}" ${flags} --hide-scrollbars "--screenshot=${OUT_DIR}/report.png" "file://${page}"
                OUTPUT_QUIET ERROR_VARIABLE log RESULT_VARIABLE status TIMEOUT 90)
if(NOT status EQUAL 0 OR NOT EXISTS "${OUT_DIR}/report.png")
  message(FATAL_ERROR "screenshot failed (${status}):\n${log}")
endif()
message("HTML report: ${drawn} scopes, whole without JavaScript; drawn, sorted and zoomed with it; page and screenshot in ${OUT_DIR}")
