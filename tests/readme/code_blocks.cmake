# Code shown to users, compiled: README.md's fenced blocks (tests/readme) and
# the examples in the public headers' opening comments (tests/headers).

# gpuprof_fenced_blocks(<text> <language> <out list>): the bodies of the
# text's ```<language> fenced blocks, in order. Found with string(FIND)
# rather than a regex list, because code holds the ';' CMake lists split on.
function(gpuprof_fenced_blocks text language out)
  set(found "")
  set(open "```${language}\n")
  string(LENGTH "${open}" open_length)
  while(TRUE)
    string(FIND "${text}" "${open}" begin)
    if(begin EQUAL -1)
      break()
    endif()
    math(EXPR begin "${begin} + ${open_length}")
    string(SUBSTRING "${text}" ${begin} -1 text)
    string(FIND "${text}" "\n```" end)
    if(end EQUAL -1)
      message(FATAL_ERROR "a ```${language} block is never closed")
    endif()
    math(EXPR end "${end} + 1")  # keep the block's last newline
    string(SUBSTRING "${text}" 0 ${end} block)
    string(SUBSTRING "${text}" ${end} -1 text)
    # Escape the separators so that one block stays one list element.
    string(REPLACE ";" "\\;" block "${block}")
    list(APPEND found "${block}")
  endwhile()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# gpuprof_readme_blocks(<markdown file> <language> <out list>): the same for a file.
function(gpuprof_readme_blocks path language out)
  file(READ ${path} text)
  gpuprof_fenced_blocks("${text}" ${language} found)
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

# Whether a C++ block can be built here: kernel capture and counters need
# CUPTI; the memory watch, graph launches and CUDA runtime calls need the
# toolkit (memory.hpp and graph.hpp declare them only with it). Such blocks
# are built where the toolkit is (the test preset), not in the CUDA-off
# sanitizer builds.
function(gpuprof_block_buildable block out)
  set(buildable TRUE)
  if(block MATCHES "gpuprof/(cupti|counters)\\.hpp" AND NOT TARGET gpuprof::cupti)
    set(buildable FALSE)
  elseif(block MATCHES "gpuprof/(memory|graph)\\.hpp|<cuda_runtime(_api)?\\.h>" AND NOT GPUPROF_HAVE_CUDA)
    set(buildable FALSE)
  endif()
  set(${out} ${buildable} PARENT_SCOPE)
endfunction()

# gpuprof_add_block(<name> <block> SOURCE <file> [DISABLED]): the block as
# <file> in this binary folder, built against gpuprof (which brings the CUDA
# runtime where there is one; CUPTI too where the block includes cupti.hpp or
# counters.hpp), with GPUPROF_DISABLE defined for DISABLED. A
# block with a main() becomes a program that runs as the test <name> in a
# folder of its own (blocks may write report files); one without is compiled
# as an object, so that a call that no longer exists fails the build.
function(gpuprof_add_block name block)
  cmake_parse_arguments(PARSE_ARGV 2 arg "DISABLED" "SOURCE" "")
  # configure_file touches the file only when the block changed: no rebuilds otherwise.
  set(source ${CMAKE_CURRENT_BINARY_DIR}/${arg_SOURCE})
  file(WRITE ${source}.in "${block}")
  configure_file(${source}.in ${source} COPYONLY)
  if(block MATCHES "int main\\(")
    add_executable(${name} ${source})
    set(workdir ${CMAKE_CURRENT_BINARY_DIR}/run_${name})
    file(MAKE_DIRECTORY ${workdir})
    add_test(NAME ${name} COMMAND ${name} WORKING_DIRECTORY ${workdir})
    # On a GPU machine a block times kernels or reads CUPTI's counters, which
    # one process at a time may hold: alone under `ctest -j`, like GPU tests.
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  else()
    add_library(${name} OBJECT ${source})
  endif()
  target_link_libraries(${name} PRIVATE gpuprof::gpuprof)
  if(block MATCHES "<gpuprof_cli/")
    target_link_libraries(${name} PRIVATE gpuprof_cli)
  endif()
  if(block MATCHES "gpuprof/(cupti|counters)\\.hpp")
    target_link_libraries(${name} PRIVATE gpuprof::cupti)
  endif()
  if(arg_DISABLED)
    target_compile_definitions(${name} PRIVATE GPUPROF_DISABLE)
  endif()
endfunction()
