// common/compute_capability.hpp: the current device's compute capability,
// for the messages that name a card's architecture ("sm_86").
#pragma once
#include <string>

#include <cuda_runtime_api.h>

#include <gpuprof/error.hpp>

namespace examples {

struct ComputeCapability {
  int device = 0, major = 0, minor = 0;
  std::string sm() const { return "sm_" + std::to_string(major) + std::to_string(minor); }
};

// Throws gpuprof::Error when the runtime cannot answer.
inline ComputeCapability current_compute_capability() {
  ComputeCapability c;
  GPUPROF_CUDA_CHECK(cudaGetDevice(&c.device));
  GPUPROF_CUDA_CHECK(cudaDeviceGetAttribute(&c.major, cudaDevAttrComputeCapabilityMajor, c.device));
  GPUPROF_CUDA_CHECK(cudaDeviceGetAttribute(&c.minor, cudaDevAttrComputeCapabilityMinor, c.device));
  return c;
}

}  // namespace examples
