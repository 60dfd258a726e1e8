// cuda/attention.hpp: causal multi-head attention with RoPE, between the QKV
// projection and the output projection (both plain GEMMs in model/cuda_model.cu).
//
// Forward: one kernel rotates q and k (RoPE, interleaved pairs) and writes q,
// k, v head-major [batch, heads, ctx, d_head]; the scores are then ONE
// strided-batched GEMM over batch·heads (1/√d_head folded into alpha, fp32
// output into a scratch buffer shared by all layers), a causal softmax
// kernel writes the probabilities P in the activation type (the only T×T
// tensor kept for the backward pass), and P·V is written straight into the
// merged-heads layout [tokens, d] the output projection reads (one
// strided-batched GEMM per sequence, so no merge pass).
// Backward mirrors it; dS overwrites P in place and dP reuses the score
// scratch, so the backward pass allocates no T×T memory of its own.
//
// The fused path (bf16 only) keeps the same RoPE kernels around
// flash_attention.hpp's kernels: no scores, no P, only a log-sum-exp per
// query row kept for backward.
#pragma once
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "cuda/gemm.hpp"
#include "cuda/vector_width.hpp"

namespace transformer::cuda {

struct AttentionShape {
  int batch, ctx, heads, d_head;
  int d_model() const { return heads * d_head; }
  int tokens() const { return batch * ctx; }
  long long score_rows() const { return static_cast<long long>(batch) * heads * ctx; }
  long long score_elements() const { return score_rows() * ctx; }
  // Score and probability rows are stored score_ld() apart (ctx padded to
  // whole vectors, the padding columns masked), so buffers for them hold
  // score_buffer_elements(); score_elements() counts the values.
  int score_ld() const { return padded_to_vectors(ctx); }
  long long score_buffer_elements() const { return score_rows() * score_ld(); }
};

// cos and sin of position·θ^(−2j/d_head), [ctx, d_head/2] each, computed in
// double on the host once per backend, so the device needs no trigonometry
// and fp32 runs lose nothing to an fp32 angle.
struct RopeTables {
  std::vector<float> cos, sin;
};
RopeTables make_rope_tables(int ctx, int d_head, double theta);

template <class Act>
struct AttentionTensors {
  Act* q;  // [batch, heads, ctx, d_head], rotated
  Act* k;  // same, rotated
  Act* v;  // same
  // The naive path's (null on the fused path):
  Act* probs;     // [batch·heads·ctx, score_ld], zeros above the diagonal; dS after backward
  float* scores;  // scratch [batch·heads·ctx, score_ld]: scores, then dP in backward
  // attention_forward allows probs == scores when Act is float (the softmax
  // then runs in place); attention_backward needs them apart.
  // The fused path's (null on the naive path):
  float* lse;  // [batch·heads·ctx]: each query row's log-sum-exp of its scores
};

// qkv [tokens, 3d] (q|k|v, unrotated) -> context [tokens, d] (heads merged).
template <class Act>
void attention_forward(const Gemm& gemm, const AttentionShape& shape, const float* rope_cos,
                       const float* rope_sin, const Act* qkv, const AttentionTensors<Act>& t, Act* context,
                       cudaStream_t stream);

// dcontext [tokens, d] -> dqkv [tokens, 3d] (gradients of the unrotated q, k
// and of v). dq, dk, dv are head-major scratch; t.probs is overwritten.
template <class Act>
void attention_backward(const Gemm& gemm, const AttentionShape& shape, const float* rope_cos,
                        const float* rope_sin, const Act* dcontext, const AttentionTensors<Act>& t, Act* dq,
                        Act* dk, Act* dv, Act* dqkv, cudaStream_t stream);

// The fused path: the same contract as attention_forward / attention_backward
// with t.q, t.k, t.v and t.lse (t.probs and t.scores unused). Backward also
// reads the forward's context, and takes flash_attention_workspace_floats()
// floats of scratch.
void fused_attention_forward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                             const __nv_bfloat16* qkv, const AttentionTensors<__nv_bfloat16>& t,
                             __nv_bfloat16* context, cudaStream_t stream);
void fused_attention_backward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                              const __nv_bfloat16* dcontext, const __nv_bfloat16* context,
                              const AttentionTensors<__nv_bfloat16>& t, __nv_bfloat16* dq, __nv_bfloat16* dk,
                              __nv_bfloat16* dv, __nv_bfloat16* dqkv, float* workspace, cudaStream_t stream);

// cuDNN's path (cudnn_attention.hpp), which reads q, k and v where the QKV
// projection wrote them: forward rotates q and k inside qkv [tokens, 3d] in
// place (qkv is then kept for backward) and writes the context and lse;
// backward has cuDNN write dq, dk, dv straight into dqkv [tokens, 3d] and
// un-rotates dq and dk there. No head-major copies either way, so RoPE moves
// two thirds of the fused path's bytes. workspace as for the fused path.
class CudnnAttention;
void cudnn_attention_forward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                             __nv_bfloat16* qkv, __nv_bfloat16* context, float* lse, CudnnAttention& cudnn,
                             cudaStream_t stream);
void cudnn_attention_backward(const AttentionShape& shape, const float* rope_cos, const float* rope_sin,
                              const __nv_bfloat16* qkv, const __nv_bfloat16* context, const float* lse,
                              const __nv_bfloat16* dcontext, __nv_bfloat16* dqkv, float* workspace,
                              CudnnAttention& cudnn, cudaStream_t stream);

}  // namespace transformer::cuda
