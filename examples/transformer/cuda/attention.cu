// cuda/attention.cu: RoPE + head split, causal softmax, and the attention
// GEMM sequence, forward and backward; and the fused path around
// flash_attention.cu's kernels (see attention.hpp).
#include "cuda/attention.hpp"

#include <cmath>

#include <gpuprof/scope.hpp>

#include "common/cuda_check.hpp"
#include "cuda/device_utils.cuh"
#include "cuda/cudnn_attention.hpp"
#include "cuda/flash_attention.hpp"

namespace transformer::cuda {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kRowsPerBlock = 8;  // softmax: one warp per row

// Where vector i (W consecutive features of one token's q|k|v row, inside one
// head: W = kVec when d_head is a multiple of it, else one RoPE pair) lives
// in the merged [tokens, 3d] layout and in the head-major q/k/v tensors.
struct RopeSlot {
  std::size_t merged, head_major;
  int part;      // 0 = q, 1 = k, 2 = v
  int position;  // t
  int pair;      // index of the vector's first pair within its head
};

template <int W>
__device__ inline RopeSlot locate(std::size_t i, int ctx, int heads, int d_head) {
  const int d = heads * d_head;
  const int vecs_per_row = 3 * d / W;
  const std::size_t row = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * W;
  const int within = col % d, head = within / d_head, offset = within % d_head;
  const std::size_t b = row / ctx;
  RopeSlot slot;
  slot.part = col / d;
  slot.position = static_cast<int>(row % ctx);
  slot.pair = offset / 2;
  slot.merged = row * 3 * d + col;
  slot.head_major = ((b * heads + head) * ctx + slot.position) * d_head + offset;
  return slot;
}

// Rotates the W/2 pairs by ±angle (sign −1 is the transpose, for backward).
template <int W>
__device__ inline void rotate_pairs(float (&v)[W], const float* cos_row, const float* sin_row, float sign) {
#pragma unroll
  for (int p = 0; p < W / 2; ++p) {
    const float c = cos_row[p], s = sign * sin_row[p];
    const float x0 = v[2 * p], x1 = v[2 * p + 1];
    v[2 * p] = x0 * c - x1 * s;
    v[2 * p + 1] = x0 * s + x1 * c;
  }
}

template <class Act, int W>
__global__ void rope_split_heads_kernel(const Act* qkv, const float* cos, const float* sin, Act* q, Act* k,
                                        Act* v, std::size_t vectors, int ctx, int heads, int d_head) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= vectors) return;
  const RopeSlot slot = locate<W>(i, ctx, heads, d_head);
  float x[W];
  load_vec(qkv + slot.merged, x);
  if (slot.part < 2) {
    const std::size_t table = static_cast<std::size_t>(slot.position) * (d_head / 2) + slot.pair;
    rotate_pairs(x, cos + table, sin + table, 1.0f);
  }
  Act* destination = slot.part == 0 ? q : slot.part == 1 ? k : v;
  store_vec(destination + slot.head_major, x);
}

template <class Act, int W>
__global__ void rope_merge_heads_backward_kernel(const Act* dq, const Act* dk, const Act* dv,
                                                 const float* cos, const float* sin, Act* dqkv,
                                                 std::size_t vectors, int ctx, int heads, int d_head) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= vectors) return;
  const RopeSlot slot = locate<W>(i, ctx, heads, d_head);
  const Act* source = slot.part == 0 ? dq : slot.part == 1 ? dk : dv;
  float x[W];
  load_vec(source + slot.head_major, x);
  if (slot.part < 2) {
    const std::size_t table = static_cast<std::size_t>(slot.position) * (d_head / 2) + slot.pair;
    rotate_pairs(x, cos + table, sin + table, -1.0f);
  }
  store_vec(dqkv + slot.merged, x);
}

// Rotates the q and k parts of the [tokens, 3d] rows where they lie (sign
// −1: the transpose, for their gradients); v is left alone. Thread i takes
// vector i of the rows' first 2d columns.
template <class Act, int W>
__global__ void rope_in_place_kernel(Act* qkv, const float* cos, const float* sin, float sign,
                                     std::size_t vectors, int ctx, int heads, int d_head) {
  const std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (i >= vectors) return;
  const int d = heads * d_head;
  const int vecs_per_row = 2 * d / W;
  const std::size_t row = i / vecs_per_row;
  const int col = static_cast<int>(i % vecs_per_row) * W;
  const int pair = (col % d_head) / 2;
  const std::size_t table = (row % ctx) * (d_head / 2) + pair;
  Act* x_at = qkv + row * 3 * d + col;
  float x[W];
  load_vec(x_at, x);
  rotate_pairs(x, cos + table, sin + table, sign);
  store_vec(x_at, x);
}

// Row r of the scores is query position r % ctx; keys beyond it are masked.
// Rows are `ld` = padded_to_vectors(ctx) apart, so the padding columns are masked
// like the future keys. Pass 1 finds the max and the sum of exponentials
// online over the unmasked part only; pass 2 writes the whole padded row
// (zeros where masked). Each lane writes only the vectors it alone reads,
// after reading them, so probs may alias scores (fp32 in place).
template <class Act>
__global__ void causal_softmax_forward_kernel(const float* scores, Act* probs, long long rows, int ctx,
                                              int ld) {
  const long long row = blockIdx.x * static_cast<long long>(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int valid = static_cast<int>(row % ctx) + 1;
  const float* s = scores + row * ld;
  float running_max = -INFINITY, running_sum = 0;
  for (int col = lane * kVec; col < valid; col += 32 * kVec) {
    float v[kVec];
    load_vec(s + col, v);
    float chunk_max = -INFINITY;
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      if (col + e < valid) chunk_max = fmaxf(chunk_max, v[e]);
    const float new_max = fmaxf(running_max, chunk_max);
    running_sum *= expf(running_max - new_max);
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      if (col + e < valid) running_sum += expf(v[e] - new_max);
    running_max = new_max;
  }
  const float row_max = warp_max(running_max);
  // Lanes that saw nothing have sum 0 and max −inf: 0·exp(−inf) = 0.
  const float total = warp_sum(running_sum == 0 ? 0.0f : running_sum * expf(running_max - row_max));
  const float inv_total = 1.0f / total;
  Act* p = probs + row * ld;
  for (int col = lane * kVec; col < ld; col += 32 * kVec) {
    float v[kVec] = {};
    if (col < valid) load_vec(s + col, v);
#pragma unroll
    for (int e = 0; e < kVec; ++e) v[e] = col + e < valid ? expf(v[e] - row_max) * inv_total : 0.0f;
    store_vec(p + col, v);
  }
}

// dS = P ⊙ (dP − Σ_j P_j·dP_j), written over P (each lane rewrites only what
// it read, after the row's reduction).
template <class Act>
__global__ void causal_softmax_backward_kernel(Act* probs_to_dscores, const float* dprobs, long long rows,
                                               int ctx, int ld) {
  const long long row = blockIdx.x * static_cast<long long>(kRowsPerBlock) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int valid = static_cast<int>(row % ctx) + 1;
  Act* p = probs_to_dscores + row * ld;
  const float* dp = dprobs + row * ld;
  float dot = 0;
  for (int col = lane * kVec; col < valid; col += 32 * kVec) {
    float pv[kVec], dpv[kVec];
    load_vec(p + col, pv);
    load_vec(dp + col, dpv);
#pragma unroll
    for (int e = 0; e < kVec; ++e)
      if (col + e < valid) dot += pv[e] * dpv[e];
  }
  dot = warp_sum(dot);
  for (int col = lane * kVec; col < ld; col += 32 * kVec) {
    float out[kVec] = {};
    if (col < valid) {
      float dpv[kVec];
      load_vec(p + col, out);
      load_vec(dp + col, dpv);
#pragma unroll
      for (int e = 0; e < kVec; ++e) out[e] = col + e < valid ? out[e] * (dpv[e] - dot) : 0.0f;
    }
    store_vec(p + col, out);
  }
}

// The RoPE kernels move kVec features at a time when no vector straddles two
// heads (d_head a multiple of kVec), else one pair at a time.
template <class Act, class Launch>
void with_rope_width(const AttentionShape& shape, const Act* merged, const Act* q, const Act* k, const Act* v,
                     Launch&& launch) {
  with_vector_width<2>(vector_aligned(shape.d_head, merged, q, k, v), launch);
}

template <class Act>
void rope_split_heads(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                      const Act* qkv, const AttentionTensors<Act>& t, cudaStream_t stream) {
  const int d = shape.d_model();
  const std::size_t elements = static_cast<std::size_t>(shape.tokens()) * 3 * d;
  GPUPROF_SCOPE("rope", stream, gpuprof::Work{6.0 * shape.tokens() * d, 2.0 * elements * sizeof(Act)});
  with_rope_width(shape, qkv, t.q, t.k, t.v, [&](auto width) {
    constexpr int W = decltype(width)::value;
    rope_split_heads_kernel<Act, W><<<blocks_for(elements / W, kThreads), kThreads, 0, stream>>>(
        qkv, rope_cos, rope_sin, t.q, t.k, t.v, elements / W, shape.ctx, shape.heads, shape.d_head);
    EXAMPLE_LAUNCH_CHECK();
  });
}

template <class Act>
void rope_merge_heads_backward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                               const Act* dq, const Act* dk, const Act* dv, Act* dqkv, cudaStream_t stream) {
  const int d = shape.d_model();
  const std::size_t elements = static_cast<std::size_t>(shape.tokens()) * 3 * d;
  GPUPROF_SCOPE("rope", stream, gpuprof::Work{6.0 * shape.tokens() * d, 2.0 * elements * sizeof(Act)});
  with_rope_width(shape, dqkv, dq, dk, dv, [&](auto width) {
    constexpr int W = decltype(width)::value;
    rope_merge_heads_backward_kernel<Act, W><<<blocks_for(elements / W, kThreads), kThreads, 0, stream>>>(
        dq, dk, dv, rope_cos, rope_sin, dqkv, elements / W, shape.ctx, shape.heads, shape.d_head);
    EXAMPLE_LAUNCH_CHECK();
  });
}

void rope_in_place(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                   __nv_bfloat16* qkv, float sign, cudaStream_t stream) {
  const std::size_t elements = static_cast<std::size_t>(shape.tokens()) * 2 * shape.d_model();
  GPUPROF_SCOPE("rope", stream, gpuprof::Work{3.0 * elements, 2.0 * elements * sizeof(__nv_bfloat16)});
  with_vector_width<2>(vector_aligned(shape.d_head, qkv), [&](auto width) {
    constexpr int W = decltype(width)::value;
    rope_in_place_kernel<__nv_bfloat16, W><<<blocks_for(elements / W, kThreads), kThreads, 0, stream>>>(
        qkv, rope_cos, rope_sin, sign, elements / W, shape.ctx, shape.heads, shape.d_head);
    EXAMPLE_LAUNCH_CHECK();
  });
}

// Causal attention's FLOPs as the fused kernels do them: the half of S = QKᵀ
// and of P·V at or below the diagonal (the naive GEMMs compute all of it).
double causal_attention_flops(const AttentionShape& shape) {
  return 2.0 * 2.0 * shape.batch * shape.heads * shape.d_head *
         (static_cast<double>(shape.ctx) * shape.ctx / 2);
}

// A fused attention's scope work (ours or cuDNN's, the same traffic). Forward:
// q, k, v read and the context written once each, plus the lse.
gpuprof::Work fused_forward_work(const AttentionShape& shape) {
  return {causal_attention_flops(shape), 4.0 * shape.tokens() * shape.d_model() * sizeof(__nv_bfloat16) +
                                             4.0 * static_cast<double>(shape.score_rows())};
}
// Backward recomputes S and P, then dV, dP, dQ and dK (2.5× the forward's
// FLOPs); q, k, v, context, dcontext read and dq, dk, dv written once each.
gpuprof::Work fused_backward_work(const AttentionShape& shape) {
  return {2.5 * causal_attention_flops(shape),
          8.0 * shape.tokens() * shape.d_model() * sizeof(__nv_bfloat16) +
              4.0 * static_cast<double>(shape.score_rows())};
}

}  // namespace

RopeTables make_rope_tables(int ctx, int d_head, double theta) {
  RopeTables tables;
  const int pairs = d_head / 2;
  tables.cos.resize(static_cast<std::size_t>(ctx) * pairs);
  tables.sin.resize(tables.cos.size());
  for (int t = 0; t < ctx; ++t)
    for (int j = 0; j < pairs; ++j) {
      const double angle = t * std::pow(theta, -2.0 * j / d_head);
      tables.cos[static_cast<std::size_t>(t) * pairs + j] = static_cast<float>(std::cos(angle));
      tables.sin[static_cast<std::size_t>(t) * pairs + j] = static_cast<float>(std::sin(angle));
    }
  return tables;
}

template <class Act>
void attention_forward(const Gemm& gemm, const AttentionShape& shape, const float* rope_cos,
                       const float* rope_sin, const Act* qkv, const AttentionTensors<Act>& t, Act* context,
                       cudaStream_t stream) {
  const int T = shape.ctx, H = shape.heads, dh = shape.d_head, d = shape.d_model();
  const int ld = shape.score_ld();
  const long long head_stride = static_cast<long long>(T) * dh;  // one head's [T, dh]
  const long long score_stride = static_cast<long long>(T) * ld;
  const cudaDataType_t act = data_type<Act>();
  rope_split_heads(shape, rope_cos, rope_sin, qkv, t, stream);
  const double bh = static_cast<double>(shape.batch) * H;
  const double score_count = static_cast<double>(shape.score_elements());
  GPUPROF_SCOPE("scaled dot product attention", stream, gpuprof::Work{2 * matmul_flops(T, T, dh, bh), 0});
  {
    GPUPROF_SCOPE(
        "computing attention scores", stream,
        gpuprof::Work{matmul_flops(T, T, dh, bh), 2.0 * bh * head_stride * sizeof(Act) + score_count * 4});
    matmul(gemm, Op::none, Op::transpose, T, T, dh, 1.0f / std::sqrt(static_cast<float>(dh)),
           {t.q, act, dh, head_stride}, {t.k, act, dh, head_stride}, 0.0f,
           {t.scores, CUDA_R_32F, ld, score_stride}, shape.batch * H);
  }
  {
    GPUPROF_SCOPE("computing softmax", stream,
                  gpuprof::Work{3.0 * score_count, score_count * (4 + sizeof(Act))});
    causal_softmax_forward_kernel<<<blocks_for(shape.score_rows(), kRowsPerBlock), kRowsPerBlock * 32, 0,
                                    stream>>>(t.scores, t.probs, shape.score_rows(), T, ld);
    EXAMPLE_LAUNCH_CHECK();
  }
  {
    GPUPROF_SCOPE(
        "final matmul", stream,
        gpuprof::Work{matmul_flops(T, dh, T, bh), (score_count + 2.0 * bh * head_stride) * sizeof(Act)});
    // Head h of sequence b goes to columns h·dh… of rows b·T…: a fixed
    // stride over heads, so one batched call per sequence.
    for (int b = 0; b < shape.batch; ++b)
      matmul(gemm, Op::none, Op::none, T, dh, T, 1.0f,
             {t.probs + b * H * score_stride, act, ld, score_stride},
             {t.v + b * H * head_stride, act, dh, head_stride}, 0.0f,
             {context + static_cast<long long>(b) * T * d, act, d, dh}, H);
  }
}

template <class Act>
void attention_backward(const Gemm& gemm, const AttentionShape& shape, const float* rope_cos,
                        const float* rope_sin, const Act* dcontext, const AttentionTensors<Act>& t, Act* dq,
                        Act* dk, Act* dv, Act* dqkv, cudaStream_t stream) {
  const int T = shape.ctx, H = shape.heads, dh = shape.d_head, d = shape.d_model();
  const int ld = shape.score_ld();
  const long long head_stride = static_cast<long long>(T) * dh;
  const long long score_stride = static_cast<long long>(T) * ld;
  const cudaDataType_t act = data_type<Act>();
  const double bh = static_cast<double>(shape.batch) * H;
  const double score_count = static_cast<double>(shape.score_elements());
  {
    GPUPROF_SCOPE("scaled dot product attention", stream, gpuprof::Work{4 * matmul_flops(T, T, dh, bh), 0});
    {
      GPUPROF_SCOPE("final matmul", stream, gpuprof::Work{2 * matmul_flops(T, T, dh, bh), 0});
      for (int b = 0; b < shape.batch; ++b) {
        const Operand dcontext_b{dcontext + static_cast<long long>(b) * T * d, act, d, dh};
        // dV = Pᵀ·dO and dP = dO·Vᵀ, per head.
        matmul(gemm, Op::transpose, Op::none, T, dh, T, 1.0f,
               {t.probs + b * H * score_stride, act, ld, score_stride}, dcontext_b, 0.0f,
               {dv + b * H * head_stride, act, dh, head_stride}, H);
        matmul(gemm, Op::none, Op::transpose, T, T, dh, 1.0f, dcontext_b,
               {t.v + b * H * head_stride, act, dh, head_stride}, 0.0f,
               {t.scores + b * H * score_stride, CUDA_R_32F, ld, score_stride}, H);
      }
    }
    {
      GPUPROF_SCOPE("computing softmax", stream,
                    gpuprof::Work{4.0 * score_count, score_count * (4 + 2 * sizeof(Act))});
      causal_softmax_backward_kernel<<<blocks_for(shape.score_rows(), kRowsPerBlock), kRowsPerBlock * 32, 0,
                                       stream>>>(t.probs, t.scores, shape.score_rows(), T, ld);
      EXAMPLE_LAUNCH_CHECK();
    }
    {
      GPUPROF_SCOPE("computing attention scores", stream, gpuprof::Work{2 * matmul_flops(T, dh, T, bh), 0});
      const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
      const Operand dscores{t.probs, act, ld, score_stride};
      matmul(gemm, Op::none, Op::none, T, dh, T, scale, dscores, {t.k, act, dh, head_stride}, 0.0f,
             {dq, act, dh, head_stride}, shape.batch * H);
      matmul(gemm, Op::transpose, Op::none, T, dh, T, scale, dscores, {t.q, act, dh, head_stride}, 0.0f,
             {dk, act, dh, head_stride}, shape.batch * H);
    }
  }
  rope_merge_heads_backward(shape, rope_cos, rope_sin, dq, dk, dv, dqkv, stream);
}

void fused_attention_forward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                             const __nv_bfloat16* qkv, const AttentionTensors<__nv_bfloat16>& t,
                             __nv_bfloat16* context, cudaStream_t stream) {
  rope_split_heads(shape, rope_cos, rope_sin, qkv, t, stream);
  GPUPROF_SCOPE("scaled dot product attention", stream, fused_forward_work(shape));
  flash_attention_forward(shape, t.q, t.k, t.v, context, t.lse, stream);
}

void fused_attention_backward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                              const __nv_bfloat16* dcontext, const __nv_bfloat16* context,
                              const AttentionTensors<__nv_bfloat16>& t, __nv_bfloat16* dq, __nv_bfloat16* dk,
                              __nv_bfloat16* dv, __nv_bfloat16* dqkv, float* workspace, cudaStream_t stream) {
  {
    GPUPROF_SCOPE("scaled dot product attention", stream, fused_backward_work(shape));
    flash_attention_backward(shape, t.q, t.k, t.v, context, t.lse, dcontext, dq, dk, dv, workspace, stream);
  }
  rope_merge_heads_backward(shape, rope_cos, rope_sin, dq, dk, dv, dqkv, stream);
}

void cudnn_attention_forward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                             __nv_bfloat16* qkv, __nv_bfloat16* context, float* lse, CudnnAttention& cudnn,
                             cudaStream_t stream) {
  rope_in_place(shape, rope_cos, rope_sin, qkv, 1.0f, stream);
  const int d = shape.d_model();
  GPUPROF_SCOPE("scaled dot product attention", stream, fused_forward_work(shape));
  cudnn.forward(shape, QkvLayout::packed, qkv, qkv + d, qkv + 2 * d, context, lse, stream);
}

void cudnn_attention_backward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                              const __nv_bfloat16* qkv, const __nv_bfloat16* context, const float* lse,
                              const __nv_bfloat16* dcontext, __nv_bfloat16* dqkv, float* workspace,
                              CudnnAttention& cudnn, cudaStream_t stream) {
  const int d = shape.d_model();
  {
    GPUPROF_SCOPE("scaled dot product attention", stream, fused_backward_work(shape));
    cudnn.backward(shape, QkvLayout::packed, qkv, qkv + d, qkv + 2 * d, context, lse, dcontext, dqkv,
                   dqkv + d, dqkv + 2 * d, workspace, stream);
  }
  rope_in_place(shape, rope_cos, rope_sin, dqkv, -1.0f, stream);
}

#define TRANSFORMER_INSTANTIATE(Act)                                                                      \
  template void attention_forward<Act>(const Gemm&, const AttentionShape&, const float*, const float*,    \
                                       const Act*, const AttentionTensors<Act>&, Act*, cudaStream_t);     \
  template void attention_backward<Act>(const Gemm&, const AttentionShape&, const float*, const float*,   \
                                        const Act*, const AttentionTensors<Act>&, Act*, Act*, Act*, Act*, \
                                        cudaStream_t);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(__nv_bfloat16)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cuda
