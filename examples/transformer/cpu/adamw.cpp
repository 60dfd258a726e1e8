// cpu/adamw.cpp: AdamW (decay after the update) with optional global-norm clipping.
#include "cpu/adamw.hpp"

#include <cmath>

#include <gpuprof/scope.hpp>

#include "cpu/checks.hpp"

namespace transformer::cpu {

template <class T>
T clip_scale(T grad_norm, T clip_norm) {
  if (clip_norm <= T(0) || grad_norm <= clip_norm) return T(1);
  return clip_norm / (grad_norm + static_cast<T>(1e-6));
}

template <class T>
T adamw_step(const AdamWConfig& config, VectorRef<T> params, const VectorCRef<T>& grads,
             AdamWState<T>& state) {
  GPUPROF_SCOPE("adamw");
  require(params.size() == grads.size() && grads.size() == state.m.size() && grads.size() == state.v.size(),
          "adamw_step", "params, grads and optimizer state differ in size");
  const T grad_norm = grads.norm();
  const T scale = clip_scale(grad_norm, static_cast<T>(config.clip_norm));
  const T beta1 = config.beta1, beta2 = config.beta2, eps = config.eps;
  const T lr = config.lr, decay = config.weight_decay;
  const double t = static_cast<double>(++state.step);
  // Bias corrections in double: 1 − β2^t is tiny for small t and loses digits in float.
  const T alpha = static_cast<T>(config.lr * std::sqrt(1.0 - std::pow(double(config.beta2), t)) /
                                 (1.0 - std::pow(double(config.beta1), t)));
  const auto g = grads.array() * scale;
  state.m.array() = beta1 * state.m.array() + (T(1) - beta1) * g;
  state.v.array() = beta2 * state.v.array() + (T(1) - beta2) * g.square();
  params.array() -= alpha * state.m.array() / (state.v.array().sqrt() + eps);
  params.array() -= lr * decay * params.array();
  return grad_norm;
}

template float clip_scale<float>(float, float);
template double clip_scale<double>(double, double);
template float adamw_step<float>(const AdamWConfig&, VectorRef<float>, const VectorCRef<float>&,
                                 AdamWState<float>&);
template double adamw_step<double>(const AdamWConfig&, VectorRef<double>, const VectorCRef<double>&,
                                   AdamWState<double>&);

}  // namespace transformer::cpu
