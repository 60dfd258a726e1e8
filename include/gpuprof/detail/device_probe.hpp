// gpuprof/detail/device_probe.hpp: is there a CUDA device to time with?
//
// Asked once per process. "No" is an ordinary answer (no GPU, no driver, a
// build without the toolkit): gpuprof then times with the host clock and says
// why, and the probe leaves no error behind for the application's own checks.
#pragma once
#include <string>

#include "../config.hpp"
#include "../error.hpp"

GPUPROF_NAMESPACE_BEGIN

// What device_status() (device.hpp) answers.
struct DeviceStatus {
  bool usable = false;
  std::string name;    // "NVIDIA H100 80GB HBM3"; "" when not usable
  std::string reason;  // why not, as a phrase: "no usable CUDA device (...)"; "" when usable
};

namespace detail {

inline DeviceStatus probe_device() {
  DeviceStatus status;
#if GPUPROF_WITH_CUDA
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    cudaGetLastError();  // the failed probe must not surface in the user's next check
    status.reason = std::string("no usable CUDA device (") + cudaGetErrorName(error) + ": " +
                    cudaGetErrorString(error) + ")";
    return status;
  }
  if (count == 0) {
    status.reason = "no usable CUDA device (the CUDA runtime reports 0 devices)";
    return status;
  }
  int device = 0;
  GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  GPUPROF_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  status.usable = true;
  status.name = properties.name;
#else
  // The macro, not the toolkit: nvcc or an installed toolkit do not turn it
  // on (config.hpp says why), so the note names the switch and the fix.
  status.reason =
      "GPUPROF_WITH_CUDA is 0 in this build, so gpuprof's CUDA timing and NVTX ranges are off, toolkit "
      "installed or not: define GPUPROF_WITH_CUDA=1 and link cudart (pkg-config --cflags --libs gpuprof, "
      "or CMake's gpuprof::gpuprof)";
#endif
  return status;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
