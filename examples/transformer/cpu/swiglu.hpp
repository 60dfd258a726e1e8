// cpu/swiglu.hpp: the SwiGLU feed-forward, y = w2(silu(w1·x) ⊙ w3·x).
//
// w1 and w3 are adjacent in the parameter layout, so they form one matrix
// w13 = [w1; w3] of shape [2·d_ff, d] and one GEMM: h13 = x·w13ᵀ [N, 2·d_ff],
// whose left d_ff columns are w1·x ("a") and right d_ff columns w3·x ("b").
#pragma once
#include "cpu/tensor.hpp"

namespace transformer::cpu {

template <class T>
struct SwigluCache {
  Matrix<T> h13;    // [N, 2·d_ff] = x·w13ᵀ
  Matrix<T> gated;  // [N, d_ff] = silu(a) ⊙ b, the input of w2
};

// The elementwise gate alone: h13 [N, 2·d_ff] -> gated [N, d_ff] (resized).
template <class T>
void swiglu_gate_forward(const MatrixCRef<T>& h13, Matrix<T>& gated);

// dgated [N, d_ff] -> dh13 [N, 2·d_ff] (resized, overwritten).
template <class T>
void swiglu_gate_backward(const MatrixCRef<T>& dgated, const MatrixCRef<T>& h13, Matrix<T>& dh13);

// The whole layer: x [N, d], w13 [2·d_ff, d], w2 [d, d_ff] -> y [N, d] (resized).
template <class T>
void swiglu_forward(const MatrixCRef<T>& x, const MatrixCRef<T>& w13, const MatrixCRef<T>& w2, Matrix<T>& y,
                    SwigluCache<T>& cache);

// dy [N, d] -> dx [N, d] (resized, overwritten); dw13, dw2 accumulated (+=).
template <class T>
void swiglu_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const MatrixCRef<T>& w13,
                     const MatrixCRef<T>& w2, const SwigluCache<T>& cache, Matrix<T>& dx, MatrixRef<T> dw13,
                     MatrixRef<T> dw2);

}  // namespace transformer::cpu
