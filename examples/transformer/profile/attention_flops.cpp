// profile/attention_flops.cpp: the counts in attention_flops.hpp.
#include "profile/attention_flops.hpp"

namespace transformer::profile {

AttentionFlops attention_flops(const ModelConfig& model, int batch, int ctx) {
  // Doubles throughout: 2.7B at ctx 1024 exceeds 2^31 score elements per forward.
  const double scores_per_layer = static_cast<double>(batch) * model.heads * ctx * ctx;
  const double layers = model.layers;
  AttentionFlops flops;
  flops.scores_matmul = 2 * scores_per_layer * model.d_head() * layers;
  flops.final_matmul = flops.scores_matmul;
  flops.softmax = softmax_flops_per_score * scores_per_layer * layers;
  return flops;
}

}  // namespace transformer::profile
