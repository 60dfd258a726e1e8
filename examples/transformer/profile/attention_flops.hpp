// profile/attention_flops.hpp: FLOPs of the three parts of scaled dot-product
// attention that question (e) compares with their measured time.
#pragma once
#include "model/config.hpp"

namespace transformer::profile {

// The assumption behind the softmax count: per score element one max, one
// subtraction, one exp, one sum and one division. Causal masking is not
// discounted anywhere (cuBLAS computes the full T x T products).
inline constexpr double softmax_flops_per_score = 5;

// One forward pass over batch x ctx tokens, all layers.
struct AttentionFlops {
  double scores_matmul = 0;  // Q·Kᵀ: 2·B·H·T²·d_head per layer
  double softmax = 0;        // softmax_flops_per_score · B·H·T² per layer
  double final_matmul = 0;   // P·V: 2·B·H·T²·d_head per layer

  double matmuls() const { return scores_matmul + final_matmul; }
  // softmax / (both matmuls): 5 / (4·d_head), whatever the context length.
  double softmax_to_matmuls() const { return matmuls() > 0 ? softmax / matmuls() : 0; }
};

AttentionFlops attention_flops(const ModelConfig& model, int batch, int ctx);

}  // namespace transformer::profile
