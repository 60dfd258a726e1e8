// tests/support/fake_libcuda.cpp: a libcuda.so.1 that loads but is no driver.
// It exports nothing the CUDA runtime looks for, so the runtime cannot start
// while the library itself loads: the machine gpu_probe.hpp must call broken
// (the test fails), not one without a GPU (skipped). Test gpu_probe_broken_driver.
extern "C" int gpuprof_fake_libcuda(void) { return 0; }
