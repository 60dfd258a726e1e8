# The usage examples in the public headers' opening comments (and in the
# command-line support headers, cli/include/gpuprof_cli/), built like
# README.md's blocks (tests/readme/code_blocks.cmake). docs/headers.md states
# the convention: an example is a ```cpp fence inside the opening comment,
# each line after "// ", and it is a whole translation unit; with a main() it
# is also linked and run as the test header_example_<header>_<n>. An indented
# line of the opening comment that calls into gpuprof outside a fence is an
# error here, so no example escapes the build. Editing a header re-runs this.
include(${PROJECT_SOURCE_DIR}/tests/readme/code_blocks.cmake)
set(gpuprof_header_examples 0)
set(example_headers)
foreach(header IN LISTS gpuprof_public_headers)
  list(APPEND example_headers include/gpuprof/${header})
endforeach()
foreach(header IN LISTS gpuprof_cli_headers)
  list(APPEND example_headers cli/include/gpuprof_cli/${header})
endforeach()
foreach(relative IN LISTS example_headers)
  set(path ${PROJECT_SOURCE_DIR}/${relative})
  # Test names as before for include/gpuprof/ (header_example_report_html_hpp_1), cli_ for the others.
  string(REGEX REPLACE "^include/gpuprof/" "" header "${relative}")
  string(REGEX REPLACE "^cli/include/gpuprof_cli/" "cli_" header "${header}")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${path})
  file(READ ${path} text)
  string(REGEX MATCH "^(//[^\n]*\n)+" comment "${text}")

  # The comment's text: each line without its "// " (or "//"). Semicolons are
  # kept out of the way of CMake's lists while lines are handled one by one.
  # Outside the fences, no line may look like code that calls gpuprof.
  string(REPLACE ";" "<semicolon>" lines "${comment}")
  string(REGEX MATCHALL "[^\n]*\n" lines "${lines}")
  set(comment "")
  set(inside FALSE)
  foreach(line IN LISTS lines)
    string(FIND "${line}" "// " spaced)
    if(spaced EQUAL 0)
      string(SUBSTRING "${line}" 3 -1 line)
    else()
      string(SUBSTRING "${line}" 2 -1 line)
    endif()
    string(REPLACE "<semicolon>" ";" text_line "${line}")
    string(APPEND comment "${text_line}")
    if(line MATCHES "^```")
      if(inside)
        set(inside FALSE)
      else()
        set(inside TRUE)
      endif()
    elseif(NOT inside AND line MATCHES "^  +[^ ].*(gpuprof::|GPUPROF_[A-Z_]+\\().*<semicolon>")
      string(STRIP "${text_line}" text_line)
      message(FATAL_ERROR "${relative}: '${text_line}' reads as a usage example outside a "
                          "```cpp block of the opening comment, so no test compiles it (docs/headers.md)")
    endif()
  endforeach()

  gpuprof_fenced_blocks("${comment}" cpp blocks)
  string(MAKE_C_IDENTIFIER "${header}" stem)
  set(index 0)
  foreach(block IN LISTS blocks)
    math(EXPR index "${index} + 1")
    math(EXPR gpuprof_header_examples "${gpuprof_header_examples} + 1")
    gpuprof_block_buildable("${block}" buildable)
    if(buildable)
      gpuprof_add_block(header_example_${stem}_${index} "${block}" SOURCE example_${stem}_${index}.cpp)
    endif()
  endforeach()
endforeach()
if(gpuprof_header_examples EQUAL 0)
  message(FATAL_ERROR "no public header has a ```cpp example: the header example test would test nothing")
endif()
