# Scopes, NVTX, CUDA events, bench, the host-clock fallback, GPUPROF_DISABLE
# and the installed package. Paths are relative to tests/.

target_sources(gpuprof_tests PRIVATE
  scopes/scope_tree_test.cpp
  scopes/bench_host_test.cpp
  scopes/tick_clock_test.cpp
  scopes/concurrency_test.cpp)

# Programs of their own: the notice is printed once per process, and
# GPUPROF_DISABLE is a compile flag.
add_executable(gpuprof_host_fallback_test scopes/host_fallback_test.cpp)
target_link_libraries(gpuprof_host_fallback_test PRIVATE gpuprof::gpuprof gpuprof_test_main)
target_include_directories(gpuprof_host_fallback_test PRIVATE ${CMAKE_CURRENT_LIST_DIR})
gpuprof_strict_warnings(gpuprof_host_fallback_test)
add_test(NAME gpuprof_host_fallback COMMAND gpuprof_host_fallback_test)

# Replaces the global operator new to inject allocation failures.
add_executable(gpuprof_scope_allocation_test scopes/allocation_failure_test.cpp)
target_link_libraries(gpuprof_scope_allocation_test PRIVATE gpuprof::gpuprof gpuprof_test_main)
gpuprof_strict_warnings(gpuprof_scope_allocation_test)
add_test(NAME gpuprof_scope_allocation COMMAND gpuprof_scope_allocation_test)

add_executable(gpuprof_disabled_test scopes/disabled_test.cpp)
target_link_libraries(gpuprof_disabled_test PRIVATE gpuprof::gpuprof gpuprof_test_main)
target_compile_definitions(gpuprof_disabled_test PRIVATE GPUPROF_DISABLE)
gpuprof_strict_warnings(gpuprof_disabled_test)
add_test(NAME gpuprof_disabled COMMAND gpuprof_disabled_test)

# GPUPROF_RECORDER_IN_ONE_UNIT: the first scope of main() is recorded by
# default and when one file includes recorder_unit.hpp; without that file it
# is missed, and the recorder says so (stderr) when it starts.
add_executable(gpuprof_early_scope_default scopes/recorder_unit/early_scope.cpp)
add_executable(gpuprof_early_scope_one_unit scopes/recorder_unit/early_scope.cpp
                                            scopes/recorder_unit/installing_unit.cpp)
add_executable(gpuprof_early_scope_no_unit scopes/recorder_unit/early_scope.cpp)
foreach(variant default one_unit no_unit)
  target_link_libraries(gpuprof_early_scope_${variant} PRIVATE gpuprof::gpuprof)
  gpuprof_strict_warnings(gpuprof_early_scope_${variant})
endforeach()
target_compile_definitions(gpuprof_early_scope_one_unit PRIVATE GPUPROF_RECORDER_IN_ONE_UNIT)
target_compile_definitions(gpuprof_early_scope_no_unit PRIVATE GPUPROF_RECORDER_IN_ONE_UNIT)
add_test(NAME gpuprof_early_scope_default COMMAND gpuprof_early_scope_default recorded)
add_test(NAME gpuprof_early_scope_one_unit COMMAND gpuprof_early_scope_one_unit recorded)
add_test(NAME gpuprof_early_scope_no_unit COMMAND gpuprof_early_scope_no_unit missed)
set_tests_properties(gpuprof_early_scope_default gpuprof_early_scope_one_unit PROPERTIES
  FAIL_REGULAR_EXPRESSION "ran before the recorder was installed")
# PASS_REGULAR_EXPRESSION replaces the exit status: the line the program
# prints at its end, after the recorder's warning, is required too.
set_tests_properties(gpuprof_early_scope_no_unit PROPERTIES
  PASS_REGULAR_EXPRESSION "gpuprof: 1 scope\\(s\\) ran before the recorder was installed.*early scope: not recorded \\(0 instance")

if(GPUPROF_HAVE_CUDA)
  # NVTX works without a driver, so this runs in CI. The recorder is linked in
  # statically; a dynamic injection named in the environment (running under
  # nsys, say) would take precedence, so the variable is removed for the test.
  add_library(gpuprof_nvtx_recorder OBJECT nvtx_injection/nvtx_recorder.cpp)
  target_link_libraries(gpuprof_nvtx_recorder PRIVATE CUDA::nvtx3)
  gpuprof_strict_warnings(gpuprof_nvtx_recorder)
  add_executable(gpuprof_nvtx_test nvtx_injection/nvtx_emission_test.cpp)
  target_link_libraries(gpuprof_nvtx_test PRIVATE gpuprof::gpuprof gpuprof_test_main gpuprof_nvtx_recorder)
  gpuprof_strict_warnings(gpuprof_nvtx_test)
  add_test(NAME gpuprof_nvtx COMMAND gpuprof_nvtx_test)
  set_tests_properties(gpuprof_nvtx PROPERTIES ENVIRONMENT_MODIFICATION "NVTX_INJECTION64_PATH=unset:")
endif()

if(CMAKE_CUDA_COMPILER)
  add_executable(gpuprof_scopes_gpu_test scopes/scopes_gpu_test.cu)
  target_link_libraries(gpuprof_scopes_gpu_test PRIVATE gpuprof::gpuprof gpuprof_gpu_test_main)
  gpuprof_strict_warnings(gpuprof_scopes_gpu_test)
  gpuprof_add_gpu_test(gpuprof_scopes_gpu gpuprof_scopes_gpu_test)
  add_executable(gpuprof_graph_timing_gpu_test scopes/graph_timing_gpu_test.cu)
  target_link_libraries(gpuprof_graph_timing_gpu_test PRIVATE gpuprof::gpuprof gpuprof_gpu_test_main)
  gpuprof_strict_warnings(gpuprof_graph_timing_gpu_test)
  gpuprof_add_gpu_test(gpuprof_graph_timing_gpu gpuprof_graph_timing_gpu_test)
endif()

# The package as a consumer sees it: installed + find_package, add_subdirectory,
# FetchContent from a local path. Each configures and builds a tiny project.
foreach(mode IN ITEMS package subdirectory fetchcontent)
  add_test(NAME gpuprof_consumer_${mode}
    COMMAND ${CMAKE_COMMAND}
      -DMODE=${mode}
      -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/cmake_consumer/${mode}
      -DGENERATOR=${CMAKE_GENERATOR}
      -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DUSE_CUDA=${GPUPROF_USE_CUDA}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake_consumer/run_consumer.cmake)
  set_tests_properties(gpuprof_consumer_${mode} PROPERTIES LABELS package)
endforeach()
