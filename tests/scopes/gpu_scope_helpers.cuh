// What the scope GPU tests share: a kernel of known duration, a checked CUDA
// call, a stream of their own, and nodes looked up by path.
#pragma once
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include <gpuprof/report.hpp>

namespace scope_tests {

// Spins for `nanoseconds` of the GPU's global timer: a kernel whose duration
// is known in advance, whatever the clocks do.
__global__ void spin_kernel(std::uint64_t nanoseconds) {
  std::uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(500);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
}

inline void check(cudaError_t status) { REQUIRE_MESSAGE(status == cudaSuccess, cudaGetErrorString(status)); }

struct StreamOwner {
  StreamOwner() { check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)); }
  ~StreamOwner() { cudaStreamDestroy(stream); }
  StreamOwner(const StreamOwner&) = delete;
  StreamOwner& operator=(const StreamOwner&) = delete;
  cudaStream_t stream = nullptr;
};

inline const gpuprof::ScopeNode* find_node(const gpuprof::Report& report, const std::string& path) {
  for (const auto& node : report.nodes)
    if (node.path == path) return &node;
  return nullptr;
}
inline const gpuprof::ScopeNode& node_at(const gpuprof::Report& report, const std::string& path) {
  const gpuprof::ScopeNode* node = find_node(report, path);
  REQUIRE_MESSAGE(node != nullptr, "no node " << path);
  return *node;
}

}  // namespace scope_tests
