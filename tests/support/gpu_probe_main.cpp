// gpuprof_gpu_probe: gpu_probe.hpp's verdict as an exit status, for GPU tests
// that are scripts rather than doctest binaries: 0 a GPU is usable, 77 none
// can exist here (skip), 1 a broken driver or no GPU under GPUPROF_REQUIRE_GPU=1.
#include "gpu_probe.hpp"

int main() { return gpuprof_test::gpu_test_gate(gpuprof_test::probe_gpu()); }
