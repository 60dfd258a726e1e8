// cuda/device_utils.cuh: the small device helpers every kernel file shares:
// 16-byte vector loads/stores of kVec elements converted to/from fp32 (the
// memory-bound kernels move data in these units) and their element-wise
// counterparts for rows that cannot be read in whole vectors, warp
// reductions, and the launch-size arithmetic. Included by the .cu files only.
#pragma once
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>

#include "cuda/split_master.hpp"
#include "cuda/vector_width.hpp"

namespace transformer::cuda {

__device__ inline float to_float(float x) { return x; }
__device__ inline float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__device__ inline T from_float(float x);
template <>
__device__ inline float from_float<float>(float x) {
  return x;
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// p must be 16-byte aligned for bf16 and 32-byte aligned for float: the
// launchers check it (vector_aligned) before they pick the kVec-wide kernels.
__device__ inline void load_vec(const float* p, float (&out)[kVec]) {
  const float4 lo = *reinterpret_cast<const float4*>(p);
  const float4 hi = *reinterpret_cast<const float4*>(p + 4);
  out[0] = lo.x;
  out[1] = lo.y;
  out[2] = lo.z;
  out[3] = lo.w;
  out[4] = hi.x;
  out[5] = hi.y;
  out[6] = hi.z;
  out[7] = hi.w;
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

// Narrower widths W < kVec, element by element: the path of kernels whose
// rows are not whole, aligned vectors (a d_model, d_ff or d_head that is not
// a multiple of kVec). Only odd shapes take it.
template <class T, int W>
__device__ inline void load_vec(const T* p, float (&out)[W]) {
  static_assert(W < kVec, "kVec-wide accesses use the vector overloads");
#pragma unroll
  for (int e = 0; e < W; ++e) out[e] = to_float(p[e]);
}

template <class T, int W>
__device__ inline void store_vec(T* p, const float (&in)[W]) {
  static_assert(W < kVec, "kVec-wide accesses use the vector overloads");
#pragma unroll
  for (int e = 0; e < W; ++e) p[e] = from_float<T>(in[e]);
}

// Split master weights (split_master.hpp): 8 hi halves are one 16-byte
// load, 8 lo halves another.
__device__ inline void load_split(const std::uint16_t* hi, const std::int16_t* lo, float (&out)[kVec]) {
  const uint4 h = *reinterpret_cast<const uint4*>(hi);
  const uint4 l = *reinterpret_cast<const uint4*>(lo);
  const std::uint16_t* hs = reinterpret_cast<const std::uint16_t*>(&h);
  const std::int16_t* ls = reinterpret_cast<const std::int16_t*>(&l);
#pragma unroll
  for (int e = 0; e < kVec; ++e) out[e] = __uint_as_float(join_bits(hs[e], ls[e]));
}

__device__ inline void store_split(std::uint16_t* hi, std::int16_t* lo, const float (&in)[kVec]) {
  uint4 h, l;
  std::uint16_t* hs = reinterpret_cast<std::uint16_t*>(&h);
  std::int16_t* ls = reinterpret_cast<std::int16_t*>(&l);
#pragma unroll
  for (int e = 0; e < kVec; ++e) {
    const SplitBits s = split_bits(__float_as_uint(in[e]));
    hs[e] = s.hi;
    ls[e] = s.lo;
  }
  *reinterpret_cast<uint4*>(hi) = h;
  *reinterpret_cast<uint4*>(lo) = l;
}

// W master weights from w on, fp32 or split.
template <int W>
__device__ inline void load_vec(const MasterWeights& w, float (&out)[W]) {
  if (w.fp32) {
    load_vec(w.fp32, out);
  } else if constexpr (W == kVec) {
    load_split(w.hi, w.lo, out);
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e) out[e] = __uint_as_float(join_bits(w.hi[e], w.lo[e]));
  }
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
// CUDA backend pads its flat parameter buffers to whole vectors.)
inline std::size_t whole_vectors(const char* caller, std::size_t count) {
  if (count % kVec != 0)
    throw std::invalid_argument(std::string(caller) + ": element count " + std::to_string(count) +
                                " is not a multiple of " + std::to_string(kVec));
  return count / kVec;
}

// Whether rows of `row_length` elements starting at each of `rows` (null
// pointers are ignored) can be moved in kVec-wide vectors: the length is a
// multiple of kVec and every start is aligned to a whole vector.
template <class... T>
bool vector_aligned(long long row_length, const T*... rows) {
  const auto aligned = [](const auto* p) {
    using Element = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
    return reinterpret_cast<std::uintptr_t>(p) % (kVec * sizeof(Element)) == 0;
  };
  return row_length % kVec == 0 && (aligned(rows) && ...);
}

// Whether master weights can be read in kVec-wide vectors from w on.
inline bool vector_aligned(const MasterWeights& w) {
  return w.fp32 ? vector_aligned(kVec, w.fp32) : vector_aligned(kVec, w.hi, w.lo);
}

// Calls launch(std::integral_constant<int, W>{}) with W = kVec when
// `whole_vectors`, else W = kNarrow: a launcher instantiates its kernel for
// both widths and picks one per call, so shapes whose rows are whole vectors
// run exactly the vector kernels and other shapes still run.
template <int kNarrow = 1, class Launch>
void with_vector_width(bool whole_vectors, Launch&& launch) {
  if (whole_vectors) launch(std::integral_constant<int, kVec>{});
  else launch(std::integral_constant<int, kNarrow>{});
}

}  // namespace transformer::cuda
