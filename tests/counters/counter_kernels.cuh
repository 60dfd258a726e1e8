// Kernels whose counter values are known in advance, for the counter GPU
// test and the probe that scripts/counters_check.sh compares with ncu.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace counter_kernels {

// Reads and writes every byte of `bytes` once (16-byte loads and stores).
__global__ void copy_kernel(const float4* in, float4* out, std::size_t count) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) out[i] = in[i];
}

// Exactly `iterations` dependent FFMAs per thread, no other FP32 arithmetic:
// b and c come from the caller, so the compiler cannot fold the chain.
__global__ void fma_kernel(float* out, float b, float c, int iterations) {
  float a = static_cast<float>(threadIdx.x);
  for (int i = 0; i < iterations; ++i) a = fmaf(a, b, c);
  out[std::size_t{blockIdx.x} * blockDim.x + threadIdx.x] = a;
}

constexpr int fma_blocks = 1024;
constexpr int fma_threads = 256;
constexpr int fma_iterations = 4096;
constexpr double fma_instructions = double(fma_blocks) * fma_threads * fma_iterations;

inline void launch_copy(const float4* in, float4* out, std::size_t bytes, cudaStream_t stream) {
  copy_kernel<<<132 * 16, 256, 0, stream>>>(in, out, bytes / sizeof(float4));
}
inline void launch_fma(float* out, cudaStream_t stream) {
  fma_kernel<<<fma_blocks, fma_threads, 0, stream>>>(out, 0.999f, 0.001f, fma_iterations);
}

}  // namespace counter_kernels
