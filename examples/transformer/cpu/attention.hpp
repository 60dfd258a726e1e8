// cpu/attention.hpp: causal multi-head self-attention with RoPE.
//
//   qkv = x·[wq|wk|wv]ᵀ                       [N, 3d]  (one GEMM, wqkv is [3d, d])
//   q, k = rope(q), rope(k)                    (per head, positions 0 … ctx−1)
//   p = softmax(q·kᵀ/√d_head + causal mask)    [batch·heads·ctx, ctx] (row max subtracted)
//   context = p·v, heads concatenated          [N, d]
//   y = context·woᵀ                            [N, d]
// Rows are tokens, batch-major (row b·ctx + t); head h owns feature columns
// h·d_head … (h+1)·d_head − 1 of q, k, v and context.
#pragma once
#include "cpu/tensor.hpp"

namespace transformer::cpu {

// What the backward pass needs from the forward one.
template <class T>
struct AttentionCache {
  Matrix<T> qkv;      // [N, 3d], q and k already rotated
  Matrix<T> probs;    // [batch·heads·ctx, ctx]: row (b·heads + h)·ctx + t; zeros above the diagonal
  Matrix<T> context;  // [N, d]: p·v, the input of the output projection
};

// The core, without projections or RoPE: qkv [N, 3d] (q, k rotated) ->
// context [N, d] and probs (both resized). `heads` divides d = qkv.cols()/3.
template <class T>
void causal_attention_forward(const MatrixCRef<T>& qkv, int batch, int ctx, int heads, Matrix<T>& context,
                              Matrix<T>& probs);

// dcontext [N, d] -> dqkv [N, 3d] (resized, overwritten): gradients with
// respect to the rotated q, k and to v.
template <class T>
void causal_attention_backward(const MatrixCRef<T>& dcontext, const MatrixCRef<T>& qkv,
                               const MatrixCRef<T>& probs, int batch, int ctx, int heads, Matrix<T>& dqkv);

// The whole layer: x [N, d], wqkv [3d, d], wo [d, d] -> y [N, d] (resized).
template <class T>
void attention_forward(const MatrixCRef<T>& x, const MatrixCRef<T>& wqkv, const MatrixCRef<T>& wo, int batch,
                       int ctx, int heads, T rope_theta, Matrix<T>& y, AttentionCache<T>& cache);

// dy [N, d] -> dx [N, d] (resized, overwritten); dwqkv [3d, d] and dwo [d, d]
// are accumulated into (+=).
template <class T>
void attention_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const MatrixCRef<T>& wqkv,
                        const MatrixCRef<T>& wo, int batch, int ctx, int heads, T rope_theta,
                        const AttentionCache<T>& cache, Matrix<T>& dx, MatrixRef<T> dwqkv, MatrixRef<T> dwo);

}  // namespace transformer::cpu
