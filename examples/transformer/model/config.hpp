// model/config.hpp: the CS336 Transformer LM's dimensions, its named sizes,
// and the one parameter layout every backend shares.
//
// All parameters live in one flat fp32 buffer in the order of
// ParameterLayout. Within a block, wq|wk|wv are adjacent so they form one
// [3d, d] matrix (one GEMM for the three projections), and w1|w3 are adjacent
// so they form one [2·d_ff, d] matrix. A weight W is stored [d_out, d_in],
// row-major, and applied as x·Wᵀ.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace transformer {

struct ModelConfig {
  std::string name = "custom";
  int vocab = 10000;
  int d_model = 768;
  int d_ff = 3072;
  int layers = 12;
  int heads = 12;
  float rope_theta = 10000.0f;
  float norm_eps = 1e-5f;

  int d_head() const { return d_model / heads; }
  // Throws std::invalid_argument naming the bad dimension.
  void validate() const;
};

// tiny (ours, the course's test model), small, medium, large, xl, 2.7B.
// Unknown names give std::nullopt.
std::optional<ModelConfig> named_size(const std::string& name);
std::vector<std::string> size_names();
// A size name, or "custom" for `custom` under that name. Throws
// std::invalid_argument for an unknown name.
ModelConfig model_for_size(const std::string& size, const ModelConfig& custom);

enum class ParamKind { embedding, norm_gain, attn_qkv, attn_out, ffn_w13, ffn_w2, lm_head };

struct ParamTensor {
  std::string name;  // "emb", "blocks.3.wq", "final_norm", "lm_head"...
  ParamKind kind;
  int layer = -1;          // -1 outside the blocks
  int rows = 0, cols = 0;  // [d_out, d_in] for weights, [1, d] for gains, [V, d] for tables
  std::size_t offset = 0;  // elements into the flat buffer
  std::size_t size() const { return static_cast<std::size_t>(rows) * cols; }
  // Fan-in + fan-out std for truncated-normal init; 1 for the embedding; gains are ones.
  double init_std = 0;
};

// Order: emb [V,d]; per block: norm1 [d], wq, wk, wv, wo [d,d], norm2 [d],
// w1 [dff,d], w3 [dff,d], w2 [d,dff]; final_norm [d]; lm_head [V,d].
struct ParameterLayout {
  std::vector<ParamTensor> tensors;
  std::size_t total = 0;  // elements
  explicit ParameterLayout(const ModelConfig& config);
  // Offsets of the pieces a backend needs most.
  std::size_t block_offset(int layer) const;               // offset of blocks.<layer>.norm1
  const ParamTensor& find(const std::string& name) const;  // throws std::out_of_range
};

// Offsets within one block, relative to block_offset(layer).
struct BlockOffsets {
  std::size_t norm1, wq, wk, wv, wo, norm2, w1, w3, w2, size;
  explicit BlockOffsets(const ModelConfig& c);
};

// Parameter counts as the course counts them (untied head).
std::size_t parameter_count(const ModelConfig& config);

// Matrix FLOPs of one forward pass over batch·ctx tokens (linear layers, LM
// head and the two attention products; causal masking not discounted, as the
// course counts). A train step is 3× the forward.
double forward_flops(const ModelConfig& config, int batch, int ctx);

}  // namespace transformer
