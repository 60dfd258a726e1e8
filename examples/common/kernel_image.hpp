// common/kernel_image.hpp: whether the current GPU is new enough for the
// examples' kernels and this program holds device code it can run. A build
// for other architectures (CMAKE_CUDA_ARCHITECTURES, docs/gpus.md) fails at
// its first launch with "no kernel image is available"; asking up front
// turns that into a message that names the card, what was built and how to
// rebuild. For CUDA sources only: the question is asked of a kernel built
// with them.
#pragma once
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include <gpuprof/error.hpp>

#include "common/compute_capability.hpp"

// The architectures the CUDA sources were built for, comma-separated (set
// by examples/common/CMakeLists.txt).
#ifndef EXAMPLES_CUDA_ARCHITECTURES
#define EXAMPLES_CUDA_ARCHITECTURES "unknown"
#endif

namespace examples {

// Never launched: its presence for the device is the answer. Every kernel
// of a target is built for the same architectures.
template <int = 0>
__global__ void kernel_image_probe() {}

// Empty when the current device can run this build's kernels: a card from
// sm_80 on (the kernels' bf16 mma.sync, cp.async and ldmatrix), with machine
// code for its architecture or PTX the driver compiles for it. Else the reason.
inline std::optional<std::string> device_code_unavailable() {
  const ComputeCapability card = current_compute_capability();
  if (card.major < 8)
    return "the examples' CUDA code needs compute capability 8.0 or newer (bf16 tensor cores: "
           "Ampere or later); device " +
           std::to_string(card.device) + " is " + card.sm();
  cudaFuncAttributes attributes{};
  const cudaError_t status =
      cudaFuncGetAttributes(&attributes, reinterpret_cast<const void*>(&kernel_image_probe<>));
  if (status == cudaSuccess) return std::nullopt;
  (void)cudaGetLastError();  // answered here, not at the next launch check
  if (status != cudaErrorNoKernelImageForDevice && status != cudaErrorInvalidDeviceFunction)
    throw gpuprof::Error(std::string("cudaFuncGetAttributes failed: ") + cudaGetErrorName(status) + ": " +
                         cudaGetErrorString(status));
  return "this build has no device code for device " + std::to_string(card.device) + ", " + card.sm() +
         " (built for CMAKE_CUDA_ARCHITECTURES " EXAMPLES_CUDA_ARCHITECTURES
         "): reconfigure with -DCMAKE_CUDA_ARCHITECTURES=" +
         card.sm().substr(3) + " and rebuild";
}

}  // namespace examples
