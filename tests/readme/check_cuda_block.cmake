# cmake -DREADME=... -DFILE=... -P check_cuda_block.cmake: README.md has
# exactly one ```cuda block, and it is FILE character for character.
cmake_minimum_required(VERSION 3.25)  # policies for script mode
include(${CMAKE_CURRENT_LIST_DIR}/code_blocks.cmake)
gpuprof_readme_blocks(${README} cuda blocks)
list(LENGTH blocks count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "README.md has ${count} ```cuda blocks; expected 1 (examples/readme/minimal.cu)")
endif()
list(GET blocks 0 block)
file(READ ${FILE} expected)
if(NOT block STREQUAL expected)
  message(FATAL_ERROR "README.md's ```cuda block differs from ${FILE}: paste the file into the README")
endif()
message(STATUS "README.md's ```cuda block is ${FILE}")
