// cuda/cudnn_attention.hpp: fused causal attention through cuDNN 9's graph
// API, the alternative to our own kernels (flash_attention.hpp) with the
// same contract: the same layouts, the same outputs (the context and the
// per-row natural-log log-sum-exp the backward pass reads), the same
// workspace. cuDNN's fused attention engines use Hopper's wgmma, which our
// mma.sync kernels cannot; docs/attention-notes.md compares the two.
//
// cuDNN has no single "attention" call before 9.15; a graph of matmul,
// pointwise and reduction operations is matched to its fused engine. The
// graph built here is the FlashAttention pattern that engine recognises:
// S = Q·Kᵀ·scale, the causal mask (row ≥ column), the softmax with its
// statistics, O = P·V; and backward's chain from the saved statistics.
//
// q, k and v may be head-major tensors of their own (our kernels' layout) or
// read in place from the QKV projection's rows [tokens, 3d] = q | k | v
// (QkvLayout::packed): cuDNN takes any strides, so the model then skips the
// copy into head-major tensors, and the gradients go straight into dqkv.
//
// Plans are built on first use of each shape (heuristics, then the first
// engine configuration that finalises) and kept, with a device workspace
// of the largest size any plan asked for; a workspace outgrown by a later
// shape is kept until destruction, since a captured graph may still use it.
// The first call of a shape must not be inside stream capture (it
// allocates): check_shape() prepares a shape ahead. One thread per
// instance: the handle's stream and the plan cache are unsynchronised.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "cuda/attention.hpp"  // AttentionShape

namespace transformer::cuda {

enum class QkvLayout { head_major, packed };

class CudnnAttention {
 public:
  // Creates a cuDNN handle on the current device. Throws std::runtime_error
  // naming the cause when cuDNN is absent, too old (< 9.0) or cannot start.
  CudnnAttention();
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;

  // The engine cuDNN chose for the last plan built, e.g. "cuDNN engine 2"
  // (empty before any call): reports name it.
  std::string engine_name() const;
  // Floats of the caller's workspace backward needs: cuDNN's fp32 dq
  // accumulator, batch·heads·ctx·d_head (no more than our kernels' workspace).
  static std::size_t workspace_floats(const AttentionShape& shape);
  // Device bytes of cuDNN's own workspace (outside the caller's buffers).
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  // Throws std::invalid_argument unless cuDNN's fused engine takes the
  // shape (d_head a multiple of 8 up to 128, every dimension positive), and
  // std::runtime_error if no engine configuration builds for it. Builds the
  // forward plan (and the backward one when with_backward) for the layout and
  // sizes the workspace, so later calls allocate nothing (and may be
  // captured into a CUDA graph).
  void check_shape(const AttentionShape& shape, QkvLayout layout = QkvLayout::head_major,
                   bool with_backward = true);

  // flash_attention_forward's contract; with QkvLayout::packed, q, k and v
  // point at the first q, k and v element of the [tokens, 3d] rows.
  void forward(const AttentionShape& shape, QkvLayout layout, const __nv_bfloat16* q, const __nv_bfloat16* k,
               const __nv_bfloat16* v, __nv_bfloat16* context, float* lse, cudaStream_t stream);

  // flash_attention_backward's contract, with workspace_floats(shape)
  // floats of workspace (cuDNN's fp32 dq accumulator, zeroed here before
  // each call). dq, dk and dv have q, k and v's layout.
  void backward(const AttentionShape& shape, QkvLayout layout, const __nv_bfloat16* q, const __nv_bfloat16* k,
                const __nv_bfloat16* v, const __nv_bfloat16* context, const float* lse,
                const __nv_bfloat16* dcontext, __nv_bfloat16* dq, __nv_bfloat16* dk, __nv_bfloat16* dv,
                float* workspace, cudaStream_t stream);

  struct Plan;  // an execution plan and its workspace size (cudnn_attention.cpp)

 private:
  Plan& plan_for(const AttentionShape& shape, QkvLayout layout, bool backward, cudaStream_t stream);
  void* workspace_for(std::size_t bytes);

  struct Handle;
  std::unique_ptr<Handle> handle_;
  std::map<std::tuple<int, int, int, int, QkvLayout, bool>, std::unique_ptr<Plan>> plans_;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  std::vector<void*> outgrown_;  // earlier workspaces, freed with the instance
  std::string engine_name_;
};

}  // namespace transformer::cuda
