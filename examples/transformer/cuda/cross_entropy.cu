// cuda/cross_entropy.cu: cross-entropy forward (a block per row, online max
// and sum of exponentials) and its in-place fused softmax-gradient backward
// (see cross_entropy.hpp).
#include "cuda/cross_entropy.hpp"

#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"

namespace transformer::cuda {
namespace {

constexpr unsigned kRowThreads = 256;
constexpr unsigned kMeanThreads = 1024;
constexpr unsigned kThreads = 256;

template <class Act>
__global__ void cross_entropy_forward_kernel(const Act* logits, const std::int32_t* targets, float* logsumexp,
                                             float* row_loss, int vocab, int ld) {
  const std::size_t row = blockIdx.x;
  const Act* l = logits + row * ld;
  float running_max = -INFINITY, running_sum = 0;
  for (int col = threadIdx.x * kVec; col < vocab; col += blockDim.x * kVec) {
    float v[kVec];
    load_vec(l + col, v);
    if (col + kVec > vocab) {  // the row's last vector reaches into the padding
#pragma unroll
      for (int e = 1; e < kVec; ++e)
        if (col + e >= vocab) v[e] = -INFINITY;
    }
    float chunk_max = v[0];
#pragma unroll
    for (int e = 1; e < kVec; ++e) chunk_max = fmaxf(chunk_max, v[e]);
    const float new_max = fmaxf(running_max, chunk_max);
    running_sum *= expf(running_max - new_max);
#pragma unroll
    for (int e = 0; e < kVec; ++e) running_sum += expf(v[e] - new_max);
    running_max = new_max;
  }
  const float row_max = block_max(running_max);
  // Threads that saw no column have sum 0 and max −inf.
  const float total = block_sum(running_sum == 0 ? 0.0f : running_sum * expf(running_max - row_max));
  if (threadIdx.x == 0) {
    const float lse = row_max + logf(total);
    logsumexp[row] = lse;
    row_loss[row] = lse - to_float(l[targets[row]]);
  }
}

__global__ void mean_kernel(const float* values, int count, float* mean) {
  float sum = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) sum += values[i];
  sum = block_sum(sum);
  if (threadIdx.x == 0) *mean = sum / static_cast<float>(count);
}

template <class Act>
__global__ void cross_entropy_backward_kernel(Act* logits, const std::int32_t* targets,
                                              const float* logsumexp, int rows, int vocab, int ld) {
  const int vecs_per_row = ld / kVec;
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= static_cast<std::size_t>(rows) * vecs_per_row) return;
  const std::size_t row = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * kVec;
  const float lse = logsumexp[row], inv_rows = 1.0f / static_cast<float>(rows);
  const int target = targets[row];
  Act* l = logits + row * ld + col;
  float v[kVec];
  load_vec(l, v);
#pragma unroll
  for (int e = 0; e < kVec; ++e)
    v[e] = col + e < vocab ? (expf(v[e] - lse) - (col + e == target ? 1.0f : 0.0f)) * inv_rows : 0.0f;
  store_vec(l, v);
}

template <class Act>
void check_padded_rows(const char* caller, const Act* logits, int vocab, int ld) {
  if (ld < vocab || !vector_aligned(ld, logits))
    throw std::invalid_argument(std::string(caller) + ": logit rows of " + std::to_string(vocab) +
                                " columns need a row stride ≥ vocab that is a multiple of " +
                                std::to_string(kVec) + " on aligned storage (got " + std::to_string(ld) +
                                ")");
}

}  // namespace

template <class Act>
void cross_entropy_forward(const Act* logits, const std::int32_t* targets, float* logsumexp, float* row_loss,
                           float* mean_loss, int rows, int vocab, int ld, cudaStream_t stream) {
  check_padded_rows("cross_entropy_forward", logits, vocab, ld);
  cross_entropy_forward_kernel<<<rows, kRowThreads, 0, stream>>>(logits, targets, logsumexp, row_loss, vocab,
                                                                 ld);
  EXAMPLE_LAUNCH_CHECK();
  mean_kernel<<<1, kMeanThreads, 0, stream>>>(row_loss, rows, mean_loss);
  EXAMPLE_LAUNCH_CHECK();
}

template <class Act>
void cross_entropy_backward(Act* logits_to_dlogits, const std::int32_t* targets, const float* logsumexp,
                            int rows, int vocab, int ld, cudaStream_t stream) {
  check_padded_rows("cross_entropy_backward", logits_to_dlogits, vocab, ld);
  const std::size_t work = static_cast<std::size_t>(rows) * (ld / kVec);
  cross_entropy_backward_kernel<<<blocks_for(work, kThreads), kThreads, 0, stream>>>(
      logits_to_dlogits, targets, logsumexp, rows, vocab, ld);
  EXAMPLE_LAUNCH_CHECK();
}

#define TRANSFORMER_INSTANTIATE(Act)                                                                     \
  template void cross_entropy_forward<Act>(const Act*, const std::int32_t*, float*, float*, float*, int, \
                                           int, int, cudaStream_t);                                      \
  template void cross_entropy_backward<Act>(Act*, const std::int32_t*, const float*, int, int, int,      \
                                            cudaStream_t);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(__nv_bfloat16)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cuda
