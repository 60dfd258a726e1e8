# cmake -DMODE=package|subdirectory|fetchcontent -DSOURCE_DIR=... -DWORK_DIR=...
#       -DGENERATOR=... -DCXX_COMPILER=... -DUSE_CUDA=ON|OFF
#       [-DNVTX_INJECTION=<gpuprof_nvtx_injection module>] -P run_consumer.cmake
# Builds tests/cmake_consumer against gpuprof the MODE way, runs it, and fails
# with the step's output if anything goes wrong. Starts from an empty WORK_DIR.
# The consumer is copied into a git repository of its own there, so that its
# report must name the consumer's revision, build type and flags. Then runs
# scope_only (scope.hpp alone) under the NVTX injection library, when one is
# given: what NVTX received must be scope_only_nvtx.txt, and stderr must say
# once which header records scopes.
include(${CMAKE_CURRENT_LIST_DIR}/../support/script_steps.cmake)
gpuprof_require_defined(run_consumer.cmake MODE SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER USE_CUDA)

file(REMOVE_RECURSE "${WORK_DIR}")
set(common -G "${GENERATOR}" -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=Release
           -DGPUPROF_USE_CUDA=${USE_CUDA})
set(consumer_args -DGPUPROF_CONSUME=${MODE} -DGPUPROF_SOURCE_DIR=${SOURCE_DIR})

if(MODE STREQUAL "package")
  run_step("configure gpuprof" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/gpuprof-build" ${common}
           -DGPUPROF_BUILD_TESTS=OFF -DGPUPROF_BUILD_EXAMPLES=OFF
           -DGPUPROF_BUILD_BENCH=OFF  # not installed: only time (nvcc) to build
           -DGPUPROF_BUILD_PYTHON=OFF)  # gpuprof_python_install covers the module's install
  # The headers need no build; the command-line tools do.
  run_step("build gpuprof's tools" ${CMAKE_COMMAND} --build "${WORK_DIR}/gpuprof-build")
  run_step("install gpuprof" ${CMAKE_COMMAND} --install "${WORK_DIR}/gpuprof-build" --prefix "${WORK_DIR}/prefix")
  foreach(installed include/gpuprof/gpuprof.hpp include/gpuprof/scope.hpp bin/gpuprof-compare bin/gpuprof-report)
    if(NOT EXISTS "${WORK_DIR}/prefix/${installed}")
      message(FATAL_ERROR "install is missing ${installed}")
    endif()
  endforeach()
  list(APPEND consumer_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
endif()

set(consumer_source "${WORK_DIR}/consumer-src")
file(COPY "${CMAKE_CURRENT_LIST_DIR}/CMakeLists.txt" "${CMAKE_CURRENT_LIST_DIR}/main.cpp"
          "${CMAKE_CURRENT_LIST_DIR}/scope_only.cpp" DESTINATION "${consumer_source}")
set(expected_revision "")
find_package(Git QUIET)
if(GIT_FOUND)
  set(git "${GIT_EXECUTABLE}" -C "${consumer_source}" -c user.name=consumer -c user.email=consumer@localhost
          -c commit.gpgsign=false)
  run_step("make the consumer a git repository" ${git} init --quiet)
  run_step("  add its files" ${git} add CMakeLists.txt main.cpp scope_only.cpp)
  run_step("  commit them" ${git} commit --quiet -m consumer)
  run_step("  describe it" ${git} describe --always --dirty --abbrev=12)
  string(STRIP "${step_output}" expected_revision)
endif()

run_step("configure consumer (${MODE})" ${CMAKE_COMMAND} -S "${consumer_source}"
         -B "${WORK_DIR}/consumer-build" ${common} ${consumer_args})
run_step("build consumer (${MODE})" ${CMAKE_COMMAND} --build "${WORK_DIR}/consumer-build")
run_step("run consumer (${MODE})" "${WORK_DIR}/consumer-build/consumer")
if(NOT step_output MATCHES "consumer" OR NOT step_output MATCHES "work")
  message(FATAL_ERROR "the consumer's report lacks its scopes:\n${step_output}")
endif()
foreach(expected "build type: Release\n" "flags: -DGPUPROF_CONSUMER_MARKER=1 -O3" "revision: ${expected_revision}\n")
  string(FIND "${step_output}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the consumer's report lacks \"${expected}\":\n${step_output}")
  endif()
endforeach()

# scope.hpp alone: the NVTX ranges reach a tool, and the notice names the header.
if(USE_CUDA AND NVTX_INJECTION)
  set(nvtx_log "${WORK_DIR}/scope_only_nvtx.txt")
  run_step("run scope_only (${MODE}) under the NVTX injection" ${CMAKE_COMMAND} -E env
           NVTX_INJECTION64_PATH=${NVTX_INJECTION} GPUPROF_NVTX_LOG=${nvtx_log}
           "${WORK_DIR}/consumer-build/scope_only")
  set(notice "gpuprof: no recorder is installed, so scopes only push their NVTX ranges; to record their timings, #include <gpuprof/profiler.hpp>")
  if(NOT EXISTS "${nvtx_log}")
    message(FATAL_ERROR "scope_only wrote no NVTX log (the injection was not loaded?):\n${step_output}")
  endif()
  file(READ "${nvtx_log}" received)
  file(READ "${CMAKE_CURRENT_LIST_DIR}/scope_only_nvtx.txt" expected)
  if(NOT received STREQUAL expected)
    message(FATAL_ERROR "NVTX received from scope_only:\n${received}\nexpected:\n${expected}")
  endif()
else()
  run_step("run scope_only (${MODE}, no NVTX)" "${WORK_DIR}/consumer-build/scope_only")
  set(notice "gpuprof: no recorder is installed, so scopes do nothing \\(a build without NVTX\\); to record their timings, #include <gpuprof/profiler.hpp>")
endif()
string(REGEX MATCHALL "gpuprof: " notices "${step_output}")  # (the notice holds a ';')
list(LENGTH notices notice_count)
if(NOT notice_count EQUAL 1 OR NOT step_output MATCHES "${notice}")
  message(FATAL_ERROR "scope_only must say once on stderr which header records scopes; it said:\n${step_output}")
endif()
