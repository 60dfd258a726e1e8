// cuda/embedding.cu: embedding gather (forward) and grouped scatter-add
// (backward); see embedding.hpp.
#include "cuda/embedding.hpp"

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"

namespace transformer::cuda {
namespace {

constexpr unsigned kThreads = 256;

template <int W>
__global__ void embedding_forward_kernel(const std::int32_t* tokens, MasterWeights table, float* out,
                                         int rows, int d) {
  const int vecs_per_row = d / W;
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= static_cast<std::size_t>(rows) * vecs_per_row) return;
  const std::size_t row = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * W;
  float values[W];
  load_vec(table + static_cast<std::size_t>(tokens[row]) * d + col, values);
  store_vec(out + row * d + col, values);
}

template <class Grad, int W>
__global__ void embedding_backward_kernel(const std::int32_t* offsets, const std::int32_t* positions,
                                          const float* dout, Grad* dtable, int vocab, int d) {
  const int vecs_per_row = d / W;
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= static_cast<std::size_t>(vocab) * vecs_per_row) return;
  const std::size_t token = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * W;
  float sum[W] = {};
  for (int p = offsets[token]; p < offsets[token + 1]; ++p) {
    float row[W];
    load_vec(dout + static_cast<std::size_t>(positions[p]) * d + col, row);
#pragma unroll
    for (int e = 0; e < W; ++e) sum[e] += row[e];
  }
  store_vec(dtable + token * d + col, sum);
}

}  // namespace

TokenGroups group_positions_by_token(const std::vector<std::int32_t>& tokens, int vocab) {
  TokenGroups groups;
  groups.offsets.assign(static_cast<std::size_t>(vocab) + 1, 0);
  for (std::int32_t token : tokens) ++groups.offsets[static_cast<std::size_t>(token) + 1];
  for (int v = 0; v < vocab; ++v) groups.offsets[v + 1] += groups.offsets[v];
  groups.positions.resize(tokens.size());
  std::vector<std::int32_t> next(groups.offsets.begin(), groups.offsets.end() - 1);
  for (std::size_t p = 0; p < tokens.size(); ++p)
    groups.positions[next[tokens[p]]++] = static_cast<std::int32_t>(p);
  return groups;
}

void embedding_forward(const std::int32_t* tokens, MasterWeights table, float* out, int rows, int d,
                       cudaStream_t stream) {
  with_vector_width(vector_aligned(d, out) && vector_aligned(table), [&](auto width) {
    constexpr int W = decltype(width)::value;
    const std::size_t work = static_cast<std::size_t>(rows) * (d / W);
    embedding_forward_kernel<W>
        <<<blocks_for(work, kThreads), kThreads, 0, stream>>>(tokens, table, out, rows, d);
    EXAMPLE_LAUNCH_CHECK();
  });
}

template <class Grad>
void embedding_backward(const std::int32_t* offsets, const std::int32_t* positions, const float* dout,
                        Grad* dtable, int vocab, int d, cudaStream_t stream) {
  with_vector_width(vector_aligned(d, dout, dtable), [&](auto width) {
    constexpr int W = decltype(width)::value;
    const std::size_t work = static_cast<std::size_t>(vocab) * (d / W);
    embedding_backward_kernel<Grad, W>
        <<<blocks_for(work, kThreads), kThreads, 0, stream>>>(offsets, positions, dout, dtable, vocab, d);
    EXAMPLE_LAUNCH_CHECK();
  });
}

template void embedding_backward<float>(const std::int32_t*, const std::int32_t*, const float*, float*, int,
                                        int, cudaStream_t);
template void embedding_backward<__nv_bfloat16>(const std::int32_t*, const std::int32_t*, const float*,
                                                __nv_bfloat16*, int, int, cudaStream_t);

}  // namespace transformer::cuda
