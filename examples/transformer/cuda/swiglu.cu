// cuda/swiglu.cu: SwiGLU gate forward and backward (see swiglu.hpp), one
// thread per kVec outputs with 16-byte accesses (one output, element-wise,
// where d_ff is not a multiple of kVec).
#include "cuda/swiglu.hpp"

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"

namespace transformer::cuda {
namespace {

constexpr unsigned kThreads = 256;

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

template <class Act, int W>
__global__ void swiglu_forward_kernel(const Act* h13, Act* gated, int rows, int d_ff) {
  const int vecs_per_row = d_ff / W;
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= static_cast<std::size_t>(rows) * vecs_per_row) return;
  const std::size_t row = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * W;
  float a[W], b[W], out[W];
  load_vec(h13 + row * 2 * d_ff + col, a);
  load_vec(h13 + row * 2 * d_ff + d_ff + col, b);
#pragma unroll
  for (int e = 0; e < W; ++e) out[e] = a[e] * sigmoid(a[e]) * b[e];
  store_vec(gated + row * d_ff + col, out);
}

// d/da silu(a) = σ(a)·(1 + a·(1 − σ(a))).
template <class Act, int W>
__global__ void swiglu_backward_kernel(const Act* h13, const Act* dgated, Act* dh13, int rows, int d_ff) {
  const int vecs_per_row = d_ff / W;
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= static_cast<std::size_t>(rows) * vecs_per_row) return;
  const std::size_t row = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * W;
  float a[W], b[W], g[W], da[W], db[W];
  load_vec(h13 + row * 2 * d_ff + col, a);
  load_vec(h13 + row * 2 * d_ff + d_ff + col, b);
  load_vec(dgated + row * d_ff + col, g);
#pragma unroll
  for (int e = 0; e < W; ++e) {
    const float s = sigmoid(a[e]);
    da[e] = g[e] * b[e] * s * (1.0f + a[e] * (1.0f - s));
    db[e] = g[e] * a[e] * s;
  }
  store_vec(dh13 + row * 2 * d_ff + col, da);
  store_vec(dh13 + row * 2 * d_ff + d_ff + col, db);
}

}  // namespace

template <class Act>
void swiglu_forward(const Act* h13, Act* gated, int rows, int d_ff, cudaStream_t stream) {
  with_vector_width(vector_aligned(d_ff, h13, gated), [&](auto width) {
    constexpr int W = decltype(width)::value;
    const std::size_t work = static_cast<std::size_t>(rows) * (d_ff / W);
    swiglu_forward_kernel<Act, W>
        <<<blocks_for(work, kThreads), kThreads, 0, stream>>>(h13, gated, rows, d_ff);
    EXAMPLE_LAUNCH_CHECK();
  });
}

template <class Act>
void swiglu_backward(const Act* h13, const Act* dgated, Act* dh13, int rows, int d_ff, cudaStream_t stream) {
  with_vector_width(vector_aligned(d_ff, h13, dgated, dh13), [&](auto width) {
    constexpr int W = decltype(width)::value;
    const std::size_t work = static_cast<std::size_t>(rows) * (d_ff / W);
    swiglu_backward_kernel<Act, W>
        <<<blocks_for(work, kThreads), kThreads, 0, stream>>>(h13, dgated, dh13, rows, d_ff);
    EXAMPLE_LAUNCH_CHECK();
  });
}

#define TRANSFORMER_INSTANTIATE(Act)                                           \
  template void swiglu_forward<Act>(const Act*, Act*, int, int, cudaStream_t); \
  template void swiglu_backward<Act>(const Act*, const Act*, Act*, int, int, cudaStream_t);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(__nv_bfloat16)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cuda
