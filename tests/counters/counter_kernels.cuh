// Kernels whose counter values are known in advance, for the counter GPU
// test and the probe that scripts/counters_check.sh compares with ncu.
#pragma once
#include <cuda_runtime_api.h>

#include <gpuprof/error.hpp>

#include <cstddef>

namespace counter_kernels {

// Reads and writes every byte of `bytes` once (16-byte loads and stores).
__global__ void copy_kernel(const float4* in, float4* out, std::size_t count) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride)
    out[i] = in[i];
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
// A chain of 2 us or so: a scope around it reads mostly what else lands in it.
constexpr int tiny_fma_iterations = 64;

inline void launch_copy(const float4* in, float4* out, std::size_t bytes, cudaStream_t stream) {
  copy_kernel<<<132 * 16, 256, 0, stream>>>(in, out, bytes / sizeof(float4));
}
inline void launch_fma(float* out, cudaStream_t stream, int iterations = fma_iterations) {
  fma_kernel<<<fma_blocks, fma_threads, 0, stream>>>(out, 0.999f, 0.001f, iterations);
}

// The copy's source (filled) and destination, and the FMA chain's output.
struct Buffers {
  std::size_t copy_bytes;
  float4* in = nullptr;
  float4* out = nullptr;
  float* fma_out = nullptr;

  explicit Buffers(std::size_t bytes) : copy_bytes(bytes) {
    GPUPROF_CUDA_CHECK(cudaMalloc(&in, copy_bytes));
    GPUPROF_CUDA_CHECK(cudaMalloc(&out, copy_bytes));
    GPUPROF_CUDA_CHECK(cudaMemset(in, 1, copy_bytes));
    GPUPROF_CUDA_CHECK(cudaMalloc(&fma_out, sizeof(float) * fma_blocks * fma_threads));
    GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~Buffers() {
    (void)cudaFree(in);  // teardown: nothing to do about a failure
    (void)cudaFree(out);
    (void)cudaFree(fma_out);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;

  void copy(cudaStream_t stream = nullptr) const { launch_copy(in, out, copy_bytes, stream); }
  void copy_back(cudaStream_t stream = nullptr) const { launch_copy(out, in, copy_bytes, stream); }
  void fma(cudaStream_t stream = nullptr) const { launch_fma(fma_out, stream); }
  void tiny_fma(cudaStream_t stream = nullptr) const { launch_fma(fma_out, stream, tiny_fma_iterations); }
};

}  // namespace counter_kernels
