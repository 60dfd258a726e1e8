// cpu/model.cpp: the CS336 Transformer LM assembled from the CPU layers.
//
// Parameters are one flat vector in ParameterLayout order; each layer sees its
// weights through Eigen::Map views into it (no copies), and the gradient
// vector is viewed the same way, so backward writes the layout directly.
#include "cpu/model.hpp"

#include <limits>
#include <stdexcept>

#include <gpuprof/scope.hpp>

#include "cpu/checks.hpp"
#include "cpu/cross_entropy.hpp"
#include "cpu/embedding.hpp"
#include "cpu/linear.hpp"
#include "cpu/rmsnorm.hpp"
#include "model/init.hpp"

namespace transformer::cpu {
namespace {

template <class T>
Eigen::Map<const Matrix<T>> matrix_view(const Vector<T>& flat, std::size_t offset, Eigen::Index rows,
                                        Eigen::Index cols) {
  return Eigen::Map<const Matrix<T>>(flat.data() + offset, rows, cols);
}
template <class T>
Eigen::Map<Matrix<T>> matrix_view(Vector<T>& flat, std::size_t offset, Eigen::Index rows, Eigen::Index cols) {
  return Eigen::Map<Matrix<T>>(flat.data() + offset, rows, cols);
}
template <class T>
Eigen::Map<const Vector<T>> vector_view(const Vector<T>& flat, std::size_t offset, Eigen::Index size) {
  return Eigen::Map<const Vector<T>>(flat.data() + offset, size);
}
template <class T>
Eigen::Map<Vector<T>> vector_view(Vector<T>& flat, std::size_t offset, Eigen::Index size) {
  return Eigen::Map<Vector<T>>(flat.data() + offset, size);
}

// The weights (or their gradients) of one block, viewed in a flat vector.
template <class Flat>
struct BlockViews {
  Flat& flat;
  std::size_t base;
  const BlockOffsets& at;
  Eigen::Index d, d_ff;
  auto norm1() const { return vector_view(flat, base + at.norm1, d); }
  auto wqkv() const { return matrix_view(flat, base + at.wq, 3 * d, d); }  // wq|wk|wv adjacent
  auto wo() const { return matrix_view(flat, base + at.wo, d, d); }
  auto norm2() const { return vector_view(flat, base + at.norm2, d); }
  auto w13() const { return matrix_view(flat, base + at.w1, 2 * d_ff, d); }  // w1|w3 adjacent
  auto w2() const { return matrix_view(flat, base + at.w2, d, d_ff); }
};

template <class T, class Flat>
BlockViews<Flat> block_views(Flat& flat, const ParameterLayout& layout, const BlockOffsets& at,
                             const ModelConfig& config, int layer) {
  return {flat, layout.block_offset(layer), at, config.d_model, config.d_ff};
}

template <class T>
std::size_t bytes_of(const Matrix<T>& m) {
  return static_cast<std::size_t>(m.size()) * sizeof(T);
}
template <class T>
std::size_t bytes_of(const Vector<T>& v) {
  return static_cast<std::size_t>(v.size()) * sizeof(T);
}

}  // namespace

template <class T>
CpuModel<T>::CpuModel(const ModelConfig& config, int batch, int ctx, bool with_training_state)
    : config_(config),
      layout_(config),  // validates the config
      block_(config),
      batch_(batch),
      ctx_(ctx),
      with_training_state_(with_training_state) {
  require(batch > 0 && ctx > 0, "CpuModel", "batch and ctx must be > 0");
  const Eigen::Index N = static_cast<Eigen::Index>(batch) * ctx;
  const Eigen::Index d = config.d_model, d_ff = config.d_ff, V = config.vocab;
  const Eigen::Index P = static_cast<Eigen::Index>(layout_.total);
  params_ = Vector<T>::Zero(P);
  if (with_training_state) {
    grads_ = Vector<T>::Zero(P);
    adam_ = AdamWState<T>(P);
  }
  // Every buffer is sized here, once, so allocated_bytes() is known before
  // the first step and the layers' resizes are no-ops.
  blocks_.resize(static_cast<std::size_t>(config.layers));
  for (BlockActivations& a : blocks_) {
    a.input.resize(N, d);
    a.norm1.resize(N, d);
    a.inv_rms1.resize(N);
    a.attention.qkv.resize(N, 3 * d);
    a.attention.probs.resize(static_cast<Eigen::Index>(batch) * config.heads * ctx, ctx);
    a.attention.context.resize(N, d);
    a.mid.resize(N, d);
    a.norm2.resize(N, d);
    a.inv_rms2.resize(N);
    a.ffn.h13.resize(N, 2 * d_ff);
    a.ffn.gated.resize(N, d_ff);
  }
  final_input_.resize(N, d);
  final_norm_.resize(N, d);
  final_inv_rms_.resize(N);
  logits_.resize(N, V);
  logsumexp_.resize(N);
  if (with_training_state) {
    d_stream_.resize(N, d);
    d_branch_.resize(N, d);
    d_norm_.resize(N, d);
    d_logits_.resize(N, V);
  }
}

template <class T>
std::size_t CpuModel<T>::required_bytes(const ModelConfig& config, int batch, int ctx,
                                        bool with_training_state) {
  // In long double, then capped: a huge --batch or --ctx must come out as
  // more than any machine has, never wrap around to a size that fits.
  using Wide = long double;
  const Wide P = static_cast<Wide>(parameter_count(config));
  const Wide N = static_cast<Wide>(batch) * static_cast<Wide>(ctx);
  const Wide d = config.d_model, d_ff = config.d_ff, V = config.vocab;
  const Wide probs =
      static_cast<Wide>(batch) * config.heads * static_cast<Wide>(ctx) * static_cast<Wide>(ctx);
  // input, norm1, qkv (3), context, mid, norm2: 8·d; h13 and gated: 3·d_ff;
  // the two inv_rms vectors: 2.
  const Wide per_block = N * (8 * d + 3 * d_ff + 2) + probs;
  Wide elements = P + config.layers * per_block + N * (2 * d + V + 2);
  if (with_training_state) elements += 3 * P /* grads, m, v */ + N * (3 * d + V) /* scratch */;
  const Wide bytes = elements * sizeof(T);
  const auto most = std::numeric_limits<std::size_t>::max();
  return bytes >= static_cast<Wide>(most) ? most : static_cast<std::size_t>(bytes);
}

template <class T>
std::size_t CpuModel<T>::allocated_bytes() const {
  std::size_t total = bytes_of(params_) + bytes_of(grads_) + bytes_of(adam_.m) + bytes_of(adam_.v);
  for (const BlockActivations& a : blocks_)
    total += bytes_of(a.input) + bytes_of(a.norm1) + bytes_of(a.inv_rms1) + bytes_of(a.attention.qkv) +
             bytes_of(a.attention.probs) + bytes_of(a.attention.context) + bytes_of(a.mid) +
             bytes_of(a.norm2) + bytes_of(a.inv_rms2) + bytes_of(a.ffn.h13) + bytes_of(a.ffn.gated);
  total += bytes_of(final_input_) + bytes_of(final_norm_) + bytes_of(final_inv_rms_) + bytes_of(logits_) +
           bytes_of(logsumexp_);
  total += bytes_of(d_stream_) + bytes_of(d_branch_) + bytes_of(d_norm_) + bytes_of(d_logits_);
  return total;
}

template <class T>
void CpuModel<T>::init_parameters(std::uint64_t seed) {
  for (const ParamTensor& tensor : layout_.tensors) {
    auto values = vector_view(params_, tensor.offset, static_cast<Eigen::Index>(tensor.size()));
    if (tensor.kind == ParamKind::norm_gain) {
      values.setOnes();
      continue;
    }
    for (std::size_t i = 0; i < tensor.size(); ++i)
      values(static_cast<Eigen::Index>(i)) =
          static_cast<T>(truncated_normal(seed, tensor.offset + i, tensor.init_std));
  }
}

template <class T>
void CpuModel<T>::set_parameters(const std::vector<double>& values) {
  require(values.size() == layout_.total, "CpuModel::set_parameters",
          std::to_string(values.size()) + " values, the layout has " + std::to_string(layout_.total));
  params_ = Eigen::Map<const Vector<double>>(values.data(), params_.size()).template cast<T>();
}

template <class T>
void CpuModel<T>::set_parameters(const std::vector<float>& values) {
  require(values.size() == layout_.total, "CpuModel::set_parameters",
          std::to_string(values.size()) + " values, the layout has " + std::to_string(layout_.total));
  params_ = Eigen::Map<const Vector<float>>(values.data(), params_.size()).template cast<T>();
}

template <class T>
T CpuModel<T>::forward(const std::vector<std::int32_t>& tokens, const std::vector<std::int32_t>& targets) {
  const Eigen::Index N = static_cast<Eigen::Index>(batch_) * ctx_;
  require_ids("CpuModel::forward (tokens)", tokens, N, config_.vocab);
  require_ids("CpuModel::forward (targets)", targets, N, config_.vocab);
  tokens_ = tokens;
  targets_ = targets;
  have_gradients_ = false;  // gradients of an earlier batch no longer match
  const T eps = config_.norm_eps, theta = config_.rope_theta;
  const Eigen::Index d = config_.d_model, V = config_.vocab;
  const Vector<T>& p = params_;

  embedding_forward<T>(matrix_view(p, layout_.find("emb").offset, V, d), tokens, blocks_.front().input);
  for (int layer = 0; layer < config_.layers; ++layer) {
    BlockActivations& a = blocks_[static_cast<std::size_t>(layer)];
    const auto w = block_views<T>(p, layout_, block_, config_, layer);
    Matrix<T>& out =
        layer + 1 < config_.layers ? blocks_[static_cast<std::size_t>(layer) + 1].input : final_input_;
    rmsnorm_forward<T>(a.input, w.norm1(), eps, a.norm1, a.inv_rms1);
    attention_forward<T>(a.norm1, w.wqkv(), w.wo(), batch_, ctx_, config_.heads, theta, a.mid, a.attention);
    a.mid += a.input;
    rmsnorm_forward<T>(a.mid, w.norm2(), eps, a.norm2, a.inv_rms2);
    swiglu_forward<T>(a.norm2, w.w13(), w.w2(), out, a.ffn);
    out += a.mid;
  }
  rmsnorm_forward<T>(final_input_, vector_view(p, layout_.find("final_norm").offset, d), eps, final_norm_,
                     final_inv_rms_);
  {
    GPUPROF_SCOPE("lm_head");
    linear_forward<T>(final_norm_, matrix_view(p, layout_.find("lm_head").offset, V, d), logits_);
  }
  loss_ = cross_entropy_forward<T>(logits_, targets_, logsumexp_);
  have_forward_ = true;
  return loss_;
}

template <class T>
const Vector<T>& CpuModel<T>::backward() {
  if (!with_training_state_)
    throw std::logic_error("CpuModel::backward: built without training state (forward only)");
  if (!have_forward_) throw std::logic_error("CpuModel::backward: call forward first");
  const T theta = config_.rope_theta;
  const Eigen::Index d = config_.d_model, V = config_.vocab;
  const Vector<T>& p = params_;
  Vector<T>& g = grads_;
  g.setZero();  // layers accumulate into their parameter gradients

  cross_entropy_backward<T>(logits_, targets_, logsumexp_, T(1), d_logits_);
  const std::size_t head = layout_.find("lm_head").offset;
  {
    GPUPROF_SCOPE("lm_head");
    linear_backward<T>(d_logits_, final_norm_, matrix_view(p, head, V, d), d_norm_,
                       matrix_view(g, head, V, d));
  }
  const std::size_t final_norm = layout_.find("final_norm").offset;
  rmsnorm_backward<T>(d_norm_, final_input_, vector_view(p, final_norm, d), final_inv_rms_, d_stream_,
                      vector_view(g, final_norm, d));
  // d_stream_ holds the gradient of the residual stream leaving the block.
  for (int layer = config_.layers - 1; layer >= 0; --layer) {
    const BlockActivations& a = blocks_[static_cast<std::size_t>(layer)];
    const auto w = block_views<T>(p, layout_, block_, config_, layer);
    const auto dw = block_views<T>(g, layout_, block_, config_, layer);
    swiglu_backward<T>(d_stream_, a.norm2, w.w13(), w.w2(), a.ffn, d_norm_, dw.w13(), dw.w2());
    rmsnorm_backward<T>(d_norm_, a.mid, w.norm2(), a.inv_rms2, d_branch_, dw.norm2());
    d_stream_ += d_branch_;
    attention_backward<T>(d_stream_, a.norm1, w.wqkv(), w.wo(), batch_, ctx_, config_.heads, theta,
                          a.attention, d_norm_, dw.wqkv(), dw.wo());
    rmsnorm_backward<T>(d_norm_, a.input, w.norm1(), a.inv_rms1, d_branch_, dw.norm1());
    d_stream_ += d_branch_;
  }
  embedding_backward<T>(d_stream_, tokens_, matrix_view(g, layout_.find("emb").offset, V, d));
  have_gradients_ = true;
  return grads_;
}

template <class T>
T CpuModel<T>::optimizer_step(const AdamWConfig& config) {
  if (!have_gradients_) throw std::logic_error("CpuModel::optimizer_step: call backward first");
  return adamw_step<T>(config, params_, grads_, adam_);
}

template <class T>
void CpuModel<T>::poison_buffers() {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  for (BlockActivations& a : blocks_) {
    for (auto* m : {&a.input, &a.norm1, &a.attention.qkv, &a.attention.probs, &a.attention.context, &a.mid,
                    &a.norm2, &a.ffn.h13, &a.ffn.gated})
      m->setConstant(nan);
    a.inv_rms1.setConstant(nan);
    a.inv_rms2.setConstant(nan);
  }
  for (auto* m : {&final_input_, &final_norm_, &logits_, &d_stream_, &d_branch_, &d_norm_, &d_logits_})
    m->setConstant(nan);
  for (auto* v : {&final_inv_rms_, &logsumexp_, &grads_}) v->setConstant(nan);
}

template class CpuModel<float>;
template class CpuModel<double>;

}  // namespace transformer::cpu
