// cuda/swiglu.hpp: the SwiGLU gate between the fused w1|w3 GEMM and the w2
// GEMM: gated = silu(a) ⊙ b, where h13 = x·[w1; w3]ᵀ is [rows, 2·d_ff] with
// a = its left d_ff columns and b = its right d_ff columns. Math in fp32.
#pragma once
#include <cuda_runtime_api.h>

namespace transformer::cuda {

template <class Act>
void swiglu_forward(const Act* h13, Act* gated, int rows, int d_ff, cudaStream_t stream);

// dgated [rows, d_ff] -> dh13 [rows, 2·d_ff] (overwritten).
template <class Act>
void swiglu_backward(const Act* h13, const Act* dgated, Act* dh13, int rows, int d_ff, cudaStream_t stream);

}  // namespace transformer::cuda
