// cpu/swiglu.cpp: SwiGLU feed-forward, forward and backward.
//
// With σ = sigmoid(a) and gated = a·σ·b:
//   d/da = dgated·b·σ·(1 + a·(1 − σ)),   d/db = dgated·a·σ.
#include "cpu/swiglu.hpp"

#include <gpuprof/scope.hpp>

#include "cpu/checks.hpp"
#include "cpu/linear.hpp"

namespace transformer::cpu {

template <class T>
void swiglu_gate_forward(const MatrixCRef<T>& h13, Matrix<T>& gated) {
  require(h13.cols() % 2 == 0, "swiglu_gate_forward", "h13 width must be 2·d_ff");
  const Eigen::Index d_ff = h13.cols() / 2;
  const auto a = h13.leftCols(d_ff).array();
  const auto b = h13.rightCols(d_ff).array();
  gated = a * (T(1) + (-a).exp()).inverse() * b;
}

template <class T>
void swiglu_gate_backward(const MatrixCRef<T>& dgated, const MatrixCRef<T>& h13, Matrix<T>& dh13) {
  require(h13.cols() % 2 == 0, "swiglu_gate_backward", "h13 width must be 2·d_ff");
  const Eigen::Index d_ff = h13.cols() / 2;
  require_shape("swiglu_gate_backward", "dgated", dgated.rows(), dgated.cols(), h13.rows(), d_ff);
  const auto a = h13.leftCols(d_ff).array();
  const auto b = h13.rightCols(d_ff).array();
  const auto g = dgated.array();
  const Matrix<T> sigma = (T(1) + (-a).exp()).inverse();
  const auto s = sigma.array();
  dh13.resize(h13.rows(), h13.cols());
  dh13.leftCols(d_ff) = g * b * s * (T(1) + a * (T(1) - s));
  dh13.rightCols(d_ff) = g * a * s;
}

template <class T>
void swiglu_forward(const MatrixCRef<T>& x, const MatrixCRef<T>& w13, const MatrixCRef<T>& w2, Matrix<T>& y,
                    SwigluCache<T>& cache) {
  GPUPROF_SCOPE("swiglu");
  require(w13.rows() == 2 * w2.cols(), "swiglu_forward", "w13 must be [2·d_ff, d], w2 [d, d_ff]");
  linear_forward<T>(x, w13, cache.h13);
  swiglu_gate_forward<T>(cache.h13, cache.gated);
  linear_forward<T>(cache.gated, w2, y);
}

template <class T>
void swiglu_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const MatrixCRef<T>& w13,
                     const MatrixCRef<T>& w2, const SwigluCache<T>& cache, Matrix<T>& dx, MatrixRef<T> dw13,
                     MatrixRef<T> dw2) {
  GPUPROF_SCOPE("swiglu");
  Matrix<T> dgated, dh13;
  linear_backward<T>(dy, cache.gated, w2, dgated, dw2);
  swiglu_gate_backward<T>(dgated, cache.h13, dh13);
  linear_backward<T>(dh13, x, w13, dx, dw13);
}

#define TRANSFORMER_INSTANTIATE(T)                                                                        \
  template void swiglu_gate_forward<T>(const MatrixCRef<T>&, Matrix<T>&);                                 \
  template void swiglu_gate_backward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, Matrix<T>&);          \
  template void swiglu_forward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, const MatrixCRef<T>&,       \
                                  Matrix<T>&, SwigluCache<T>&);                                           \
  template void swiglu_backward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, const MatrixCRef<T>&,      \
                                   const MatrixCRef<T>&, const SwigluCache<T>&, Matrix<T>&, MatrixRef<T>, \
                                   MatrixRef<T>);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(double)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cpu
