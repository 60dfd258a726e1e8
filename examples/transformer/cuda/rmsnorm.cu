// cuda/rmsnorm.cu: RMSNorm forward and backward (see rmsnorm.hpp). A warp per
// row with 16-byte accesses (element-wise ones where d_model is not a
// multiple of kVec); the row is read twice (statistics, then the
// output), the second time mostly from L1/L2. The gain gradient, a column
// sum over all rows, is a separate kernel that reduces in a fixed order so
// gradients are bit-for-bit reproducible.
#include "cuda/rmsnorm.hpp"

#include "cuda/check.hpp"
#include "cuda/device_utils.cuh"

namespace transformer::cuda {
namespace {

constexpr unsigned kRowsPerBlock = 8;  // one warp each
constexpr unsigned kGainRowGroups = 16;
constexpr unsigned kRecomputeThreads = 256;

// The one expression of a norm's output, shared by forward and recompute so
// that the two agree bit for bit.
template <int W>
__device__ inline void normalize(const float (&x)[W], float r, const float (&g)[W], float (&y)[W]) {
#pragma unroll
  for (int e = 0; e < W; ++e) y[e] = x[e] * r * g[e];
}

template <class Act, int W>
__global__ void rmsnorm_forward_kernel(const float* x, const float* gain, Act* y, float* inv_rms,
                                       float* x_copy, int rows, int d, float eps) {
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::size_t base = static_cast<std::size_t>(row) * d;
  float sum_squares = 0;
  for (int col = lane * W; col < d; col += 32 * W) {
    float v[W];
    load_vec(x + base + col, v);
#pragma unroll
    for (int e = 0; e < W; ++e) sum_squares += v[e] * v[e];
  }
  const float r = rsqrtf(warp_sum(sum_squares) / static_cast<float>(d) + eps);
  if (lane == 0) inv_rms[row] = r;
  for (int col = lane * W; col < d; col += 32 * W) {
    float v[W], g[W], out[W];
    load_vec(x + base + col, v);
    load_vec(gain + col, g);
    normalize(v, r, g, out);
    store_vec(y + base + col, out);
    if (x_copy) store_vec(x_copy + base + col, v);
  }
}

// One thread per W outputs.
template <class Act, int W>
__global__ void rmsnorm_recompute_kernel(const float* x, const float* gain, const float* inv_rms,
                                         Act* y, int rows, int d) {
  const int vecs_per_row = d / W;
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= static_cast<std::size_t>(rows) * vecs_per_row) return;
  const std::size_t row = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * W;
  float v[W], g[W], out[W];
  load_vec(x + row * d + col, v);
  load_vec(gain + col, g);
  normalize(v, inv_rms[row], g, out);
  store_vec(y + row * d + col, out);
}

// dx_k = r·(g_k·dy_k − x_k·r²·Σ_j g_j·dy_j·x_j / d), from y_k = g_k·x_k·r.
template <class Act, int W>
__global__ void rmsnorm_backward_kernel(const Act* dy, const float* x, const float* gain,
                                        const float* inv_rms, const float* residual, float* dx,
                                        Act* dx_act, int rows, int d) {
  const int row = blockIdx.x * kRowsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const std::size_t base = static_cast<std::size_t>(row) * d;
  float dot = 0;
  for (int col = lane * W; col < d; col += 32 * W) {
    float dyv[W], xv[W], g[W];
    load_vec(dy + base + col, dyv);
    load_vec(x + base + col, xv);
    load_vec(gain + col, g);
#pragma unroll
    for (int e = 0; e < W; ++e) dot += g[e] * dyv[e] * xv[e];
  }
  const float r = inv_rms[row];
  const float coefficient = r * r * warp_sum(dot) / static_cast<float>(d);
  for (int col = lane * W; col < d; col += 32 * W) {
    float dyv[W], xv[W], g[W], out[W];
    load_vec(dy + base + col, dyv);
    load_vec(x + base + col, xv);
    load_vec(gain + col, g);
    if (residual) {
      load_vec(residual + base + col, out);
    } else {
#pragma unroll
      for (int e = 0; e < W; ++e) out[e] = 0;
    }
#pragma unroll
    for (int e = 0; e < W; ++e) out[e] += r * (g[e] * dyv[e] - xv[e] * coefficient);
    store_vec(dx + base + col, out);
    if (dx_act) store_vec(dx_act + base + col, out);
  }
}

// Block = 32 columns × kGainRowGroups row groups; each thread sums every
// kGainRowGroups-th row of its column, then the groups are added in order.
template <class Act>
__global__ void rmsnorm_gain_grad_kernel(const Act* dy, const float* x, const float* inv_rms,
                                         float* dgain, int rows, int d) {
  __shared__ float partial[kGainRowGroups][33];
  const int col = blockIdx.x * 32 + threadIdx.x;
  float sum = 0;
  if (col < d) {
#pragma unroll 4
    for (int row = threadIdx.y; row < rows; row += kGainRowGroups) {
      const std::size_t i = static_cast<std::size_t>(row) * d + col;
      sum += to_float(dy[i]) * x[i] * inv_rms[row];
    }
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && col < d) {
    float total = 0;
    for (unsigned group = 0; group < kGainRowGroups; ++group) total += partial[group][threadIdx.x];
    dgain[col] = total;
  }
}

}  // namespace

template <class Act>
void rmsnorm_forward(const float* x, const float* gain, Act* y, float* inv_rms, float* x_copy,
                     int rows, int d, float eps, cudaStream_t stream) {
  with_vector_width(vector_aligned(d, x, gain, y, x_copy), [&](auto width) {
    rmsnorm_forward_kernel<Act, decltype(width)::value>
        <<<blocks_for(rows, kRowsPerBlock), kRowsPerBlock * 32, 0, stream>>>(
            x, gain, y, inv_rms, x_copy, rows, d, eps);
    TRANSFORMER_CHECK_LAUNCH();
  });
}

template <class Act>
void rmsnorm_recompute(const float* x, const float* gain, const float* inv_rms, Act* y, int rows,
                       int d, cudaStream_t stream) {
  with_vector_width(vector_aligned(d, x, gain, y), [&](auto width) {
    constexpr int W = decltype(width)::value;
    const std::size_t work = static_cast<std::size_t>(rows) * (d / W);
    rmsnorm_recompute_kernel<Act, W>
        <<<blocks_for(work, kRecomputeThreads), kRecomputeThreads, 0, stream>>>(x, gain, inv_rms,
                                                                               y, rows, d);
    TRANSFORMER_CHECK_LAUNCH();
  });
}

template <class Act>
void rmsnorm_backward(const Act* dy, const float* x, const float* gain, const float* inv_rms,
                      const float* residual, float* dx, Act* dx_act, float* dgain, int rows, int d,
                      cudaStream_t stream) {
  with_vector_width(vector_aligned(d, dy, x, gain, residual, dx, dx_act), [&](auto width) {
    rmsnorm_backward_kernel<Act, decltype(width)::value>
        <<<blocks_for(rows, kRowsPerBlock), kRowsPerBlock * 32, 0, stream>>>(
            dy, x, gain, inv_rms, residual, dx, dx_act, rows, d);
    TRANSFORMER_CHECK_LAUNCH();
  });
  rmsnorm_gain_grad_kernel<<<blocks_for(d, 32), dim3(32, kGainRowGroups), 0, stream>>>(
      dy, x, inv_rms, dgain, rows, d);
  TRANSFORMER_CHECK_LAUNCH();
}

#define TRANSFORMER_INSTANTIATE(Act)                                                              \
  template void rmsnorm_forward<Act>(const float*, const float*, Act*, float*, float*, int, int,  \
                                     float, cudaStream_t);                                        \
  template void rmsnorm_recompute<Act>(const float*, const float*, const float*, Act*, int, int, \
                                       cudaStream_t);                                            \
  template void rmsnorm_backward<Act>(const Act*, const float*, const float*, const float*,       \
                                      const float*, float*, Act*, float*, int, int, cudaStream_t);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(__nv_bfloat16)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cuda
