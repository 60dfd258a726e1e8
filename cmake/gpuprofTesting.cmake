# Helpers shared by every test and example folder of this repository (not
# installed: consumers of the package never see them).

# Warnings we hold our own code to. Not put on the gpuprof target itself: a
# consumer's flags are the consumer's business.
function(gpuprof_strict_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
endfunction()

# A test that needs a GPU. Its program exits with 77 only where no GPU can
# exist (no driver, or no device: tests/support/gpu_probe.hpp decides, and
# GPUPROF_REQUIRE_GPU=1 makes even that a failure), and ctest then reports
# it as skipped, never as passed. The `gpu` label selects these tests on the
# device machine (`ctest -L gpu`).
set(GPUPROF_SKIP_RETURN_CODE 77)
function(gpuprof_add_gpu_test name)
  add_test(NAME ${name} COMMAND ${ARGN})
  set_tests_properties(${name} PROPERTIES
    LABELS gpu
    SKIP_RETURN_CODE ${GPUPROF_SKIP_RETURN_CODE})
endfunction()
