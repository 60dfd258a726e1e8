# Scopes, NVTX, CUDA events, bench, the host-clock fallback, GPUPROF_DISABLE
# and the installed package. Paths are relative to tests/.

target_sources(gpuprof_tests PRIVATE
  scopes/scope_tree_test.cpp
  scopes/incremental_report_test.cpp
  scopes/step_schedule_test.cpp
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
  set_target_properties(gpuprof_nvtx_recorder PROPERTIES POSITION_INDEPENDENT_CODE ON)
  gpuprof_strict_warnings(gpuprof_nvtx_recorder)
  # The same recorder as a tool library, loaded through NVTX_INJECTION64_PATH
  # (the package consumers' scope_only program, below).
  add_library(gpuprof_nvtx_injection MODULE nvtx_injection/injection_library.cpp)
  # gpuprof's headers only for nvtx_colour(): no cudart in a tool library.
  target_include_directories(gpuprof_nvtx_injection PRIVATE ${PROJECT_SOURCE_DIR}/include)
  target_link_libraries(gpuprof_nvtx_injection PRIVATE CUDA::nvtx3 gpuprof_nvtx_recorder)
  gpuprof_strict_warnings(gpuprof_nvtx_injection)
  add_executable(gpuprof_nvtx_test nvtx_injection/nvtx_emission_test.cpp nvtx_injection/static_injection.cpp)
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
set(nvtx_injection "")
if(TARGET gpuprof_nvtx_injection)
  set(nvtx_injection $<TARGET_FILE:gpuprof_nvtx_injection>)
endif()
foreach(mode IN ITEMS package subdirectory fetchcontent)
  add_test(NAME gpuprof_consumer_${mode}
    COMMAND ${CMAKE_COMMAND}
      -DMODE=${mode}
      -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
      -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/cmake_consumer/${mode}
      -DGENERATOR=${CMAKE_GENERATOR}
      -DCXX_COMPILER=${CMAKE_CXX_COMPILER}
      -DUSE_CUDA=${GPUPROF_USE_CUDA}
      -DNVTX_INJECTION=${nvtx_injection}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake_consumer/run_consumer.cmake)
  set_tests_properties(gpuprof_consumer_${mode} PROPERTIES LABELS package)
endforeach()

# Profiler::set_warmup in the shared binary; GPUPROF_WARMUP in programs of
# their own (the variable is read when the profiler starts).
target_sources(gpuprof_tests PRIVATE scopes/scope_handle_test.cpp scopes/warmup/set_warmup_test.cpp)
add_executable(gpuprof_warmup_environment_test scopes/warmup/environment_test.cpp)
target_link_libraries(gpuprof_warmup_environment_test PRIVATE gpuprof::gpuprof gpuprof_test_main)
gpuprof_strict_warnings(gpuprof_warmup_environment_test)
add_test(NAME gpuprof_warmup_environment COMMAND gpuprof_warmup_environment_test -tc=*GPUPROF_WARMUP=1*)
set_tests_properties(gpuprof_warmup_environment PROPERTIES ENVIRONMENT GPUPROF_WARMUP=1)
# A value that is not a count is said at start and ignored: the run keeps its report.
add_test(NAME gpuprof_warmup_environment_refused COMMAND gpuprof_warmup_environment_test "-tc=*not a count*")
set_tests_properties(gpuprof_warmup_environment_refused PROPERTIES ENVIRONMENT GPUPROF_WARMUP=ten
  PASS_REGULAR_EXPRESSION "GPUPROF_WARMUP='ten' is not a whole number.*ignored.*Status: SUCCESS")

# nvcc without GPUPROF_WITH_CUDA: a compile-time warning that names the fix
# (config.hpp, docs/configuration.md); none once the switch is defined.
if(CMAKE_CUDA_COMPILER)
  list(GET CUDAToolkit_INCLUDE_DIRS 0 gpuprof_cuda_include)
  add_test(NAME gpuprof_nvcc_without_switch_warns
           COMMAND ${CMAKE_COMMAND} -DNVCC=${CMAKE_CUDA_COMPILER} -DINCLUDE_DIR=${PROJECT_SOURCE_DIR}/include
                   -DCUDA_INCLUDE_DIR=${gpuprof_cuda_include}
                   -DWORK=${CMAKE_CURRENT_BINARY_DIR}/nvcc_message
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/scopes/nvcc_message/nvcc_message_test.cmake)
endif()

# The package without CMake: a fresh install moved elsewhere, pkg-config's
# flags, examples/makefile (g++, and nvcc as CUDA where there is one) and
# README.md's "Without CMake" lines. One install (gpuprof_consumer_pkg_config,
# the fixture) and one test per compile, so that the compiles run beside each
# other under `ctest -j`. The gpu variant requires the example's report to
# read cuda_events: a value, so it shares the GPU (SHARES_GPU).
set(gpuprof_pkg_config_consumer
    ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DGENERATOR=${CMAKE_GENERATOR}
    -DCXX_COMPILER=${CMAKE_CXX_COMPILER} -DUSE_CUDA=${GPUPROF_USE_CUDA} -DNVCC=${CMAKE_CUDA_COMPILER}
    -DWORK_DIR=${CMAKE_CURRENT_BINARY_DIR}/pkg_config_consumer)
set(gpuprof_pkg_config_script ${CMAKE_CURRENT_SOURCE_DIR}/pkg_config_consumer/run_pkg_config_consumer.cmake)
add_test(NAME gpuprof_consumer_pkg_config
         COMMAND ${gpuprof_pkg_config_consumer} -DPART=install -P ${gpuprof_pkg_config_script})
set_tests_properties(gpuprof_consumer_pkg_config PROPERTIES LABELS package
                     FIXTURES_SETUP gpuprof_pkg_config_install)
foreach(part IN ITEMS makefile makefile_nvcc readme_sh_1 readme_sh_2 readme_meson)
  set(part_args -DPART=${part})
  if(part MATCHES "^readme_sh_([12])$")
    set(part_args -DPART=readme_sh -DBLOCK=${CMAKE_MATCH_1})
  endif()
  add_test(NAME gpuprof_consumer_pkg_config_${part}
           COMMAND ${gpuprof_pkg_config_consumer} ${part_args} -P ${gpuprof_pkg_config_script})
  set_tests_properties(gpuprof_consumer_pkg_config_${part} PROPERTIES LABELS package
                       FIXTURES_REQUIRED gpuprof_pkg_config_install SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endforeach()
if(GPUPROF_HAVE_CUDA)
  gpuprof_add_gpu_test(gpuprof_consumer_pkg_config_gpu SHARES_GPU
                       ${gpuprof_pkg_config_consumer} -DPART=makefile -DGPU=ON -P ${gpuprof_pkg_config_script})
  set_tests_properties(gpuprof_consumer_pkg_config_gpu PROPERTIES
    FIXTURES_REQUIRED gpuprof_pkg_config_install
    SKIP_REGULAR_EXPRESSION "SKIPPED: no usable CUDA device")
endif()
