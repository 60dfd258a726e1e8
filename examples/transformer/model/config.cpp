// model/config.cpp: named sizes, validation, the flat parameter layout and the
// parameter/FLOP counts.
#include "model/config.hpp"

#include <cmath>

namespace transformer {
namespace {

ModelConfig make_size(const char* name, int d_model, int d_ff, int layers, int heads) {
  ModelConfig config;
  config.name = name;
  config.d_model = d_model;
  config.d_ff = d_ff;
  config.layers = layers;
  config.heads = heads;
  return config;
}

// docs/model.md's table; tiny is the course's own test model.
const std::vector<ModelConfig>& all_sizes() {
  static const std::vector<ModelConfig> sizes = {
      make_size("tiny", 64, 128, 3, 4),        make_size("small", 768, 3072, 12, 12),
      make_size("medium", 1024, 4096, 24, 16), make_size("large", 1280, 5120, 36, 20),
      make_size("xl", 1600, 6400, 48, 25),     make_size("2.7B", 2560, 10240, 32, 32),
  };
  return sizes;
}

void require_positive(const char* what, double value) {
  if (!(value > 0))
    throw std::invalid_argument(std::string("model config: ") + what + " must be > 0 (got " +
                                std::to_string(value) + ")");
}

// Truncated-normal std of a linear weight [d_out, d_in] (docs/model.md, Initialisation).
double fan_std(int rows, int cols) { return std::sqrt(2.0 / (static_cast<double>(rows) + cols)); }

}  // namespace

void ModelConfig::validate() const {
  require_positive("vocab", vocab);
  require_positive("d_model", d_model);
  require_positive("d_ff", d_ff);
  require_positive("layers", layers);
  require_positive("heads", heads);
  require_positive("rope_theta", rope_theta);
  require_positive("norm_eps", norm_eps);
  if (d_model % heads != 0)
    throw std::invalid_argument("model config: d_model " + std::to_string(d_model) +
                                " is not divisible by heads " + std::to_string(heads));
  if (d_head() % 2 != 0)
    throw std::invalid_argument("model config: d_head = d_model / heads = " + std::to_string(d_head()) +
                                " must be even (RoPE rotates pairs of features)");
}

std::optional<ModelConfig> named_size(const std::string& name) {
  for (const ModelConfig& config : all_sizes())
    if (config.name == name) return config;
  return std::nullopt;
}

std::vector<std::string> size_names() {
  std::vector<std::string> names;
  for (const ModelConfig& config : all_sizes()) names.push_back(config.name);
  return names;
}

ModelConfig model_for_size(const std::string& size, const ModelConfig& custom) {
  if (size == "custom") {
    ModelConfig model = custom;
    model.name = "custom";
    return model;
  }
  const auto model = named_size(size);
  if (!model) throw std::invalid_argument("unknown model size '" + size + "'");
  return *model;
}

ParameterLayout::ParameterLayout(const ModelConfig& config) {
  config.validate();
  const int d = config.d_model, dff = config.d_ff, V = config.vocab;
  auto add = [&](std::string name, ParamKind kind, int layer, int rows, int cols, double std) {
    ParamTensor tensor;
    tensor.name = std::move(name);
    tensor.kind = kind;
    tensor.layer = layer;
    tensor.rows = rows;
    tensor.cols = cols;
    tensor.offset = total;
    tensor.init_std = std;
    total += tensor.size();
    tensors.push_back(std::move(tensor));
  };
  add("emb", ParamKind::embedding, -1, V, d, 1.0);
  for (int layer = 0; layer < config.layers; ++layer) {
    const std::string prefix = "blocks." + std::to_string(layer) + ".";
    add(prefix + "norm1", ParamKind::norm_gain, layer, 1, d, 0.0);
    for (const char* w : {"wq", "wk", "wv"}) add(prefix + w, ParamKind::attn_qkv, layer, d, d, fan_std(d, d));
    add(prefix + "wo", ParamKind::attn_out, layer, d, d, fan_std(d, d));
    add(prefix + "norm2", ParamKind::norm_gain, layer, 1, d, 0.0);
    add(prefix + "w1", ParamKind::ffn_w13, layer, dff, d, fan_std(dff, d));
    add(prefix + "w3", ParamKind::ffn_w13, layer, dff, d, fan_std(dff, d));
    add(prefix + "w2", ParamKind::ffn_w2, layer, d, dff, fan_std(d, dff));
  }
  add("final_norm", ParamKind::norm_gain, -1, 1, d, 0.0);
  add("lm_head", ParamKind::lm_head, -1, V, d, fan_std(V, d));
}

std::size_t ParameterLayout::block_offset(int layer) const {
  return find("blocks." + std::to_string(layer) + ".norm1").offset;
}

const ParamTensor& ParameterLayout::find(const std::string& name) const {
  for (const ParamTensor& tensor : tensors)
    if (tensor.name == name) return tensor;
  throw std::out_of_range("parameter layout has no tensor named '" + name + "'");
}

BlockOffsets::BlockOffsets(const ModelConfig& c) {
  const std::size_t d = static_cast<std::size_t>(c.d_model);
  const std::size_t dff = static_cast<std::size_t>(c.d_ff);
  norm1 = 0;
  wq = norm1 + d;
  wk = wq + d * d;
  wv = wk + d * d;
  wo = wv + d * d;
  norm2 = wo + d * d;
  w1 = norm2 + d;
  w3 = w1 + dff * d;
  w2 = w3 + dff * d;
  size = w2 + d * dff;
}

std::size_t parameter_count(const ModelConfig& config) {
  const std::size_t V = static_cast<std::size_t>(config.vocab);
  const std::size_t d = static_cast<std::size_t>(config.d_model);
  const std::size_t dff = static_cast<std::size_t>(config.d_ff);
  const std::size_t L = static_cast<std::size_t>(config.layers);
  const std::size_t per_block = 4 * d * d + 3 * d * dff + 2 * d;
  return V * d /* embedding */ + L * per_block + d /* final norm */ + V * d /* LM head */;
}

double forward_flops(const ModelConfig& config, int batch, int ctx) {
  const double N = static_cast<double>(batch) * ctx;
  const double d = config.d_model, dff = config.d_ff, V = config.vocab;
  const double projections = 2 * N * d * (4 * d);                       // q, k, v, o
  const double ffn = 2 * N * d * (3 * dff);                             // w1, w3, w2
  const double attention = 2 * (2 * N * static_cast<double>(ctx) * d);  // q·kᵀ and p·v, all heads
  return config.layers * (projections + ffn + attention) + 2 * N * d * V;
}

}  // namespace transformer
