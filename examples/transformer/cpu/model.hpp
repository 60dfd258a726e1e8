// cpu/model.hpp: the whole CS336 Transformer LM on the CPU, templated on the
// scalar: double is the reference the tests (CPU and CUDA) compare against,
// float is the fallback backend (cpu_backend.cpp).
//
// Parameters, gradients and AdamW moments are flat vectors in ParameterLayout
// order (model/config.hpp), exactly the CUDA backend's buffers, so any of them
// can be compared element by element.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu/adamw.hpp"
#include "cpu/attention.hpp"
#include "cpu/swiglu.hpp"
#include "cpu/tensor.hpp"
#include "model/backend.hpp"
#include "model/config.hpp"

namespace transformer::cpu {

template <class T>
class CpuModel {
 public:
  // Validates the config (std::invalid_argument) and allocates every buffer
  // for batch·ctx tokens; with_training_state = false leaves out gradients and
  // AdamW moments (a forward-only run). Parameters start at zero: call
  // init_parameters or set_parameters.
  CpuModel(const ModelConfig& config, int batch, int ctx, bool with_training_state = true);

  // Bytes such a model allocates, without allocating them (for OOM checks).
  static std::size_t required_bytes(const ModelConfig& config, int batch, int ctx, bool with_training_state);

  const ModelConfig& config() const { return config_; }
  const ParameterLayout& layout() const { return layout_; }
  int batch() const { return batch_; }
  int ctx() const { return ctx_; }

  // model/init.hpp's truncated_normal(seed, flat index, init_std); gains = 1.
  void init_parameters(std::uint64_t seed);
  // values.size() must be layout().total (std::invalid_argument otherwise).
  void set_parameters(const std::vector<double>& values);
  void set_parameters(const std::vector<float>& values);
  const Vector<T>& parameters() const { return params_; }
  Vector<T>& parameters() { return params_; }

  // tokens and targets: batch·ctx ids in [0, vocab), row-major [batch, ctx]
  // (std::invalid_argument otherwise). Keeps what backward needs; returns the
  // mean cross-entropy.
  T forward(const std::vector<std::int32_t>& tokens, const std::vector<std::int32_t>& targets);
  T loss() const { return loss_; }
  const Matrix<T>& logits() const { return logits_; }  // [batch·ctx, vocab]

  // Gradients of the last forward's loss, overwritten (not accumulated), in
  // layout order. Throws std::logic_error before any forward or without
  // training state.
  const Vector<T>& backward();
  const Vector<T>& gradients() const { return grads_; }

  // One AdamW step with the last backward's gradients (std::logic_error if
  // backward has not run since the last forward). Returns ‖g‖₂ before clipping.
  T optimizer_step(const AdamWConfig& config);
  const AdamWState<T>& optimizer_state() const { return adam_; }

  // Fills every activation and gradient buffer with NaN (RunConfig::poison_buffers),
  // so a value a step fails to write shows up.
  void poison_buffers();
  std::size_t allocated_bytes() const;

 private:
  struct BlockActivations {
    Matrix<T> input;  // residual stream entering the block [N, d]
    Matrix<T> norm1;  // rmsnorm1(input)
    Vector<T> inv_rms1;
    AttentionCache<T> attention;
    Matrix<T> mid;    // input + attention(norm1)
    Matrix<T> norm2;  // rmsnorm2(mid)
    Vector<T> inv_rms2;
    SwigluCache<T> ffn;
  };

  ModelConfig config_;
  ParameterLayout layout_;
  BlockOffsets block_;
  int batch_, ctx_;
  bool with_training_state_;

  Vector<T> params_, grads_;
  AdamWState<T> adam_;

  std::vector<std::int32_t> tokens_, targets_;
  bool have_forward_ = false;
  bool have_gradients_ = false;
  std::vector<BlockActivations> blocks_;
  Matrix<T> final_input_;  // residual stream after the last block
  Matrix<T> final_norm_;
  Vector<T> final_inv_rms_;
  Matrix<T> logits_;
  Vector<T> logsumexp_;
  T loss_ = 0;

  // Scratch for the backward pass.
  Matrix<T> d_stream_, d_branch_, d_norm_, d_logits_;
};

extern template class CpuModel<float>;
extern template class CpuModel<double>;

}  // namespace transformer::cpu
