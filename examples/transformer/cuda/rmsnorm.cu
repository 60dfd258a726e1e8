// cuda/rmsnorm.cu: RMSNorm forward and backward (see rmsnorm.hpp). A warp per
// row with 16-byte accesses (element-wise ones where d_model is not a
// multiple of kVec); the row is read twice (statistics, then the
// output), the second time mostly from L1/L2. The gain gradient, a column
// sum over all rows, is a two-stage reduction in a fixed order (so gradients
// are bit-for-bit reproducible): chunks of rows × 256-column slabs spread
// over the whole GPU write per-chunk partial sums, then one thread per
// column adds its chunks in order. (The one-stage kernel it replaces ran
// d/32 blocks, 24 for the small model, and was the train step's most
// expensive kernel.)
#include "cuda/rmsnorm.hpp"

#include <algorithm>

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"

namespace transformer::cuda {
namespace {

constexpr unsigned kRowsPerBlock = 8;  // one warp each
constexpr unsigned kRecomputeThreads = 256;
// Gain gradient, stage 1: a block is 32 threads × kVec columns (256) by
// kGainRowGroups rows at a time, over one chunk of at least kGainMinChunkRows
// rows; at most kGainMaxChunks chunks (enough blocks to fill the GPU).
constexpr unsigned kGainRowGroups = 8;
constexpr int kGainMinChunkRows = 32;
constexpr int kGainMaxChunks = 128;
constexpr unsigned kGainSumThreads = 256;

int gain_chunks(int rows) {
  return std::max(1, std::min(kGainMaxChunks, (rows + kGainMinChunkRows - 1) / kGainMinChunkRows));
}

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

// Stage 1: partials[chunk, col] = Σ over the chunk's rows of dy·x·inv_rms.
// Each thread sums every kGainRowGroups-th row of its chunk for its W
// columns (W = kVec, or 1 where d is not whole vectors); the row groups are
// then added in order through shared memory.
template <class Act, int W>
__global__ void rmsnorm_gain_partials_kernel(const Act* dy, const float* x, const float* inv_rms,
                                             float* partials, int rows, int d, int chunk_rows) {
  __shared__ float group_sums[kGainRowGroups][32 * W + 1];
  const int col = (blockIdx.x * 32 + threadIdx.x) * W;
  const int chunk = blockIdx.y;
  const int first = chunk * chunk_rows, last = min(rows, first + chunk_rows);
  float sum[W] = {};
  if (col < d) {
    for (int row = first + threadIdx.y; row < last; row += kGainRowGroups) {
      const std::size_t i = static_cast<std::size_t>(row) * d + col;
      float dyv[W], xv[W];
      load_vec(dy + i, dyv);
      load_vec(x + i, xv);
      const float r = inv_rms[row];
#pragma unroll
      for (int e = 0; e < W; ++e) sum[e] += dyv[e] * xv[e] * r;
    }
  }
#pragma unroll
  for (int e = 0; e < W; ++e) group_sums[threadIdx.y][threadIdx.x * W + e] = sum[e];
  __syncthreads();
  // The block's threads finish one of its 32·W columns each.
  const int lane_col = threadIdx.y * 32 + threadIdx.x;
  const int out_col = blockIdx.x * 32 * W + lane_col;
  if (lane_col < 32 * W && out_col < d) {
    float total = 0;
    for (unsigned group = 0; group < kGainRowGroups; ++group) total += group_sums[group][lane_col];
    partials[static_cast<std::size_t>(chunk) * d + out_col] = total;
  }
}

// Stage 2: dgain[col] = Σ_chunk partials[chunk, col], chunks in order,
// rounded once to the gradients' type.
template <class Grad>
__global__ void rmsnorm_gain_sum_kernel(const float* partials, Grad* dgain, int chunks, int d) {
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= d) return;
  float total = 0;
  for (int chunk = 0; chunk < chunks; ++chunk) total += partials[static_cast<std::size_t>(chunk) * d + col];
  dgain[col] = from_float<Grad>(total);
}

}  // namespace

std::size_t rmsnorm_gain_partials_floats(int rows, int d) {
  return static_cast<std::size_t>(gain_chunks(rows)) * d;
}

template <class Act>
void rmsnorm_forward(const float* x, const float* gain, Act* y, float* inv_rms, float* x_copy,
                     int rows, int d, float eps, cudaStream_t stream) {
  with_vector_width(vector_aligned(d, x, gain, y, x_copy), [&](auto width) {
    rmsnorm_forward_kernel<Act, decltype(width)::value>
        <<<blocks_for(rows, kRowsPerBlock), kRowsPerBlock * 32, 0, stream>>>(
            x, gain, y, inv_rms, x_copy, rows, d, eps);
    EXAMPLE_LAUNCH_CHECK();
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
    EXAMPLE_LAUNCH_CHECK();
  });
}

template <class Act>
void rmsnorm_backward(const Act* dy, const float* x, const float* gain, const float* inv_rms,
                      const float* residual, float* dx, Act* dx_act, Act* dgain,
                      float* gain_partials, int rows, int d, cudaStream_t stream) {
  with_vector_width(vector_aligned(d, dy, x, gain, residual, dx, dx_act), [&](auto width) {
    rmsnorm_backward_kernel<Act, decltype(width)::value>
        <<<blocks_for(rows, kRowsPerBlock), kRowsPerBlock * 32, 0, stream>>>(
            dy, x, gain, inv_rms, residual, dx, dx_act, rows, d);
    EXAMPLE_LAUNCH_CHECK();
  });
  const int chunks = gain_chunks(rows);
  const int chunk_rows = (rows + chunks - 1) / chunks;
  with_vector_width(vector_aligned(d, dy, x), [&](auto width) {
    constexpr int W = decltype(width)::value;
    const dim3 grid(blocks_for(d, 32 * W), chunks);
    rmsnorm_gain_partials_kernel<Act, W><<<grid, dim3(32, kGainRowGroups), 0, stream>>>(
        dy, x, inv_rms, gain_partials, rows, d, chunk_rows);
    EXAMPLE_LAUNCH_CHECK();
  });
  rmsnorm_gain_sum_kernel<<<blocks_for(d, kGainSumThreads), kGainSumThreads, 0, stream>>>(
      gain_partials, dgain, chunks, d);
  EXAMPLE_LAUNCH_CHECK();
}

#define TRANSFORMER_INSTANTIATE(Act)                                                              \
  template void rmsnorm_forward<Act>(const float*, const float*, Act*, float*, float*, int, int,  \
                                     float, cudaStream_t);                                        \
  template void rmsnorm_recompute<Act>(const float*, const float*, const float*, Act*, int, int, \
                                       cudaStream_t);                                            \
  template void rmsnorm_backward<Act>(const Act*, const float*, const float*, const float*,       \
                                      const float*, float*, Act*, Act*, float*, int, int,        \
                                      cudaStream_t);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(__nv_bfloat16)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cuda
