// cuda/rmsnorm.hpp: RMSNorm, y = x · rsqrt(mean(x²) + eps) · g, statistics in
// fp32. The input is the fp32 residual stream; the output is in the
// activation type Act (float, or bf16 under mixed precision) because it only
// feeds a GEMM.
//
// Residual handling is fused in: the forward pass can also copy x into the
// buffer that the following projection then accumulates into (beta = 1), and
// the backward pass adds the norm's input gradient onto the residual
// gradient, so no separate residual-add kernels exist.
#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

#include "cuda/split_master.hpp"

namespace transformer::cuda {

// x, x_copy [rows, d] fp32; gain [d] (master weights: fp32 or split);
// y [rows, d]; inv_rms [rows] (kept for the backward pass). x_copy may be null.
template <class Act>
void rmsnorm_forward(const float* x, MasterWeights gain, Act* y, float* inv_rms, float* x_copy, int rows,
                     int d, float eps, cudaStream_t stream);

// Floats of scratch rmsnorm_backward needs for `rows` rows of width d (the
// gain gradient's per-chunk partial sums; nothing in it survives the call).
std::size_t rmsnorm_gain_partials_floats(int rows, int d);

// dy [rows, d] -> dx = residual + ∂loss/∂x (fp32; residual may be null = 0,
// and may alias dx); dx_act, when not null, receives dx rounded to Act for
// the GEMMs that consume it; dgain [d] is overwritten with Σ_rows dy·x·inv_rms
// (summed in fp32 in a fixed order, through gain_partials, and rounded once
// to Act: the gradients are Act, like the weight gradients of the GEMMs).
// Each block keeps 8 rows of d fp32 sums in shared memory, so d is bounded by
// the device's shared memory per block (7,264 on an H100, where the largest
// model has d = 2,560); beyond it the call throws std::invalid_argument.
template <class Act>
void rmsnorm_backward(const Act* dy, const float* x, MasterWeights gain, const float* inv_rms,
                      const float* residual, float* dx, Act* dx_act, Act* dgain, float* gain_partials,
                      int rows, int d, cudaStream_t stream);

}  // namespace transformer::cuda
