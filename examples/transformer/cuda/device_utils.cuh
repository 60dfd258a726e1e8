// cuda/device_utils.cuh: the small device helpers every kernel file shares:
// 16-byte vector loads/stores of kVec elements converted to/from fp32 (the
// memory-bound kernels move data in these units), warp reductions, and the
// launch-size arithmetic. Included by the .cu files only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>

namespace transformer::cuda {

// Elements per vector access: 8 bf16 = one 16-byte load; 8 floats = two.
// The backend requires every row length to be a multiple of it.
constexpr int kVec = 8;

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__device__ inline T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) { return x; }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// p must be 16-byte aligned for bf16 and 32-byte aligned for float (every row
// start and kVec-multiple column offset is, given the backend's size checks).
__device__ inline void load_vec(const float* p, float (&out)[kVec]) {
  const float4 lo = *reinterpret_cast<const float4*>(p);
  const float4 hi = *reinterpret_cast<const float4*>(p + 4);
  out[0] = lo.x; out[1] = lo.y; out[2] = lo.z; out[3] = lo.w;
  out[4] = hi.x; out[5] = hi.y; out[6] = hi.z; out[7] = hi.w;
}

__device__ inline void load_vec(const __nv_bfloat16* p, float (&out)[kVec]) {
  const uint4 raw = *reinterpret_cast<const uint4*>(p);
  const __nv_bfloat162* pairs = reinterpret_cast<const __nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec / 2; ++i) {
    const float2 f = __bfloat1622float2(pairs[i]);
    out[2 * i] = f.x;
    out[2 * i + 1] = f.y;
  }
}

__device__ inline void store_vec(float* p, const float (&in)[kVec]) {
  *reinterpret_cast<float4*>(p) = make_float4(in[0], in[1], in[2], in[3]);
  *reinterpret_cast<float4*>(p + 4) = make_float4(in[4], in[5], in[6], in[7]);
}

__device__ inline void store_vec(__nv_bfloat16* p, const float (&in)[kVec]) {
  uint4 raw;
  __nv_bfloat162* pairs = reinterpret_cast<__nv_bfloat162*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec / 2; ++i) pairs[i] = __floats2bfloat162_rn(in[2 * i], in[2 * i + 1]);
  *reinterpret_cast<uint4*>(p) = raw;
}

__device__ inline float warp_sum(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ inline float warp_max(float x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

// Sum over the block, the same value returned to every thread, in a fixed
// order (deterministic). blockDim.x must be a multiple of 32, at most 1024.
__device__ inline float block_sum(float x) {
  __shared__ float partial[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  x = warp_sum(x);
  __syncthreads();  // `partial` may still be read by a previous call
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  const int warps = blockDim.x / 32;
  x = lane < warps ? partial[lane] : 0.0f;
  return warp_sum(x);
}

__device__ inline float block_max(float x) {
  __shared__ float partial[32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  x = warp_max(x);
  __syncthreads();
  if (lane == 0) partial[warp] = x;
  __syncthreads();
  const int warps = blockDim.x / 32;
  x = lane < warps ? partial[lane] : -INFINITY;
  return warp_max(x);
}

inline unsigned blocks_for(std::size_t work_items, unsigned threads_per_block) {
  return static_cast<unsigned>((work_items + threads_per_block - 1) / threads_per_block);
}

// Vectors in a flat buffer of `count` elements. Kernels over flat buffers
// have no scalar tail loop, so a count that is not a multiple of kVec would
// leave up to kVec - 1 trailing elements silently untouched: refuse it. (The
// parameter buffer qualifies: every tensor has d_model or d_ff columns, which
// check_supported requires to be multiples of kVec.)
inline std::size_t whole_vectors(const char* caller, std::size_t count) {
  if (count % kVec != 0)
    throw std::invalid_argument(std::string(caller) + ": element count " + std::to_string(count) +
                                " is not a multiple of " + std::to_string(kVec));
  return count / kVec;
}

}  // namespace transformer::cuda
