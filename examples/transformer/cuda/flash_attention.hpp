// cuda/flash_attention.hpp: fused causal attention in bf16 on the tensor cores
// (FlashAttention-2 style), the replacement for the score-matrix path of
// attention.hpp. No T×T tensor ever reaches device memory: the forward pass
// keeps a running (max, sum) per query row in registers and stores only the
// row's log-sum-exp; the backward pass recomputes the probabilities from it.
//
// Layouts match attention.hpp: q, k, v and their gradients head-major
// [batch, heads, ctx, d_head] (as the RoPE kernel writes them), the context
// and its gradient merged-heads [batch·ctx, heads·d_head] (what the output
// projection reads and returns). The softmax scale is 1/√d_head, the mask
// causal; any ctx ≥ 1; d_head one of 64, 80, 96, 128. fp32 accumulation.
#pragma once
#include <cstddef>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "cuda/attention.hpp"  // AttentionShape

namespace transformer::cuda {

// Throws std::invalid_argument naming the problem unless the shape is one the
// kernels are built for (every dimension positive, d_head in {64, 80, 96, 128}).
void check_flash_attention_shape(const AttentionShape& shape);

// context [batch·ctx, heads·d_head] and lse [batch·heads·ctx]: the natural
// log of Σ_j exp(q·k_j/√d_head) of each query row, the backward pass's input.
void flash_attention_forward(const AttentionShape& shape, const __nv_bfloat16* q, const __nv_bfloat16* k,
                             const __nv_bfloat16* v, __nv_bfloat16* context, float* lse, cudaStream_t stream);

// Floats of device scratch flash_attention_backward needs: an fp32 dq
// accumulator [batch·heads·ctx, d_head] and rowsum(dcontext ∘ context)
// [batch·heads·ctx]. Nothing in it survives the call.
std::size_t flash_attention_workspace_floats(const AttentionShape& shape);

// The backward pass's tiles. The fastest take up to 113 KB of shared memory
// per block (d_head 128), which sm_80, sm_90 and sm_100 offer; where the
// device offers less (99 KB on sm_86, sm_89, sm_120), `automatic` takes tiles
// half as many queries tall for the head sizes that need it. `compact`
// forces those tiles on any device (the tests check them on every card).
enum class FlashBackwardTiles { automatic, compact };

// dcontext [batch·ctx, heads·d_head] -> dq, dk, dv head-major. context and
// lse are the forward pass's outputs for the same q, k, v. dq, dk and dv are
// written whole (no accumulation into them).
void flash_attention_backward(const AttentionShape& shape, const __nv_bfloat16* q, const __nv_bfloat16* k,
                              const __nv_bfloat16* v, const __nv_bfloat16* context, const float* lse,
                              const __nv_bfloat16* dcontext, __nv_bfloat16* dq, __nv_bfloat16* dk,
                              __nv_bfloat16* dv, float* workspace, cudaStream_t stream,
                              FlashBackwardTiles tiles = FlashBackwardTiles::automatic);

}  // namespace transformer::cuda
