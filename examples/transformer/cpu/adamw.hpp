// cpu/adamw.hpp: AdamW over the flat parameter buffer, decay after the Adam
// update (docs/model.md, the course's order; PyTorch decays first):
//   m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²;  α_t = lr·√(1−β2^t)/(1−β1^t)
//   θ −= α_t·m/(√v + ε);  θ −= lr·λ·θ
// with t = 1 on the first step. Optional clipping scales g by M/(‖g‖ + 1e-6)
// when the global L2 norm ‖g‖ exceeds M = clip_norm (0 = off).
#pragma once
#include "cpu/tensor.hpp"
#include "model/backend.hpp"

namespace transformer::cpu {

template <class T>
struct AdamWState {
  Vector<T> m, v;      // first and second moments, zero-initialised
  long long step = 0;  // steps taken; the next step uses t = step + 1
  explicit AdamWState(Eigen::Index size = 0) : m(Vector<T>::Zero(size)), v(Vector<T>::Zero(size)) {}
};

// The factor clipping multiplies the gradients by: 1 when clip_norm is 0 or
// grad_norm ≤ clip_norm, else clip_norm / (grad_norm + 1e-6).
template <class T>
T clip_scale(T grad_norm, T clip_norm);

// One step on params with grads (same size as state.m). grads are not
// modified (clipping is applied on the fly). Returns ‖grads‖₂ before clipping.
template <class T>
T adamw_step(const AdamWConfig& config, VectorRef<T> params, const VectorCRef<T>& grads,
             AdamWState<T>& state);

}  // namespace transformer::cpu
