// tests/support/gpu_probe.hpp: may a GPU test skip here, or must it run?
//
// A GPU test is skipped only where no GPU can exist:
//   - no CUDA driver at all: libcuda.so.1 cannot be loaded (the runtime then
//     reports cudaErrorInsufficientDriver, as on CI's machine), or
//   - a driver but no device: cudaErrorNoDevice, or a device count of 0.
// Every other answer is a broken machine, and the test fails: a driver that
// loads but is older than the runtime (cudaErrorInsufficientDriver with
// libcuda.so.1 present), a driver/kernel-module mismatch, devices hidden by
// a bad CUDA_VISIBLE_DEVICES, and so on.
//
// GPUPROF_REQUIRE_GPU=1 (scripts/device_run.sh sets it on the GPU machine)
// turns "no GPU" into a failure too, so a run there cannot be green by
// skipping.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <cuda_runtime_api.h>
#include <dlfcn.h>

namespace gpuprof_test {

// The exit status ctest's SKIP_RETURN_CODE maps to "skipped" (cmake/gpuprofTesting.cmake).
inline constexpr int kSkipExitCode = 77;

struct GpuProbe {
  enum Verdict { usable, absent, broken } verdict = usable;
  std::string reason;  // why absent or broken
};

inline bool gpu_required() {
  const char* value = std::getenv("GPUPROF_REQUIRE_GPU");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// Initialises the CUDA runtime in the calling process: a program that forks
// workers afterwards asks in a child instead (ddp_gpu_test.cpp).
inline GpuProbe probe_gpu() {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status == cudaSuccess)
    return devices > 0 ? GpuProbe{} : GpuProbe{GpuProbe::absent, "the CUDA driver reports 0 devices"};
  const std::string what =
      std::string("cudaGetDeviceCount: ") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status);
  if (status == cudaErrorNoDevice) return {GpuProbe::absent, what};
  // RTLD_NOLOAD first: the runtime may have loaded the driver already.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (driver == nullptr) driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* why = dlerror();
    return {GpuProbe::absent, "no CUDA driver: libcuda.so.1 cannot be loaded (" +
                                  std::string(why ? why : "not found") + "); " + what};
  }
  dlclose(driver);
  return {GpuProbe::broken, what +
                                ", with a CUDA driver installed (libcuda.so.1 loads): "
                                "a broken or mismatched driver, not a machine without a GPU"};
}

// The exit status a GPU test returns instead of running (after printing why),
// or 0 when it should run.
inline int gpu_test_gate(const GpuProbe& probe) {
  if (probe.verdict == GpuProbe::usable) return 0;
  if (probe.verdict == GpuProbe::broken) {
    std::fprintf(stderr, "FAILED: no usable CUDA device: %s\n", probe.reason.c_str());
    return 1;
  }
  if (gpu_required()) {
    std::fprintf(stderr, "FAILED: GPUPROF_REQUIRE_GPU=1, and %s\n", probe.reason.c_str());
    return 1;
  }
  std::printf("SKIPPED: no CUDA device can exist here (%s)\n", probe.reason.c_str());
  return kSkipExitCode;
}

}  // namespace gpuprof_test
