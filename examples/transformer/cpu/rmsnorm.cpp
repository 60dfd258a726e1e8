// cpu/rmsnorm.cpp: RMSNorm forward and backward.
//
// With r = (mean(x²) + eps)^(−1/2) and y = x·r·g, the gradient of one row is
//   dx = r·(dy⊙g) − (r³/d)·⟨dy⊙g, x⟩·x,   dg = Σ_rows dy⊙x·r.
#include "cpu/rmsnorm.hpp"

#include <cmath>

#include <gpuprof/scope.hpp>

#include "cpu/checks.hpp"

namespace transformer::cpu {

template <class T>
void rmsnorm_forward(const MatrixCRef<T>& x, const VectorCRef<T>& gain, T eps, Matrix<T>& y,
                     Vector<T>& inv_rms) {
  GPUPROF_SCOPE("rmsnorm");
  require(gain.size() == x.cols(), "rmsnorm_forward", "gain size differs from x's width");
  const T width = static_cast<T>(x.cols());
  y.resize(x.rows(), x.cols());
  inv_rms.resize(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const T r = T(1) / std::sqrt(x.row(i).squaredNorm() / width + eps);
    inv_rms(i) = r;
    y.row(i) = (x.row(i).array() * gain.transpose().array()) * r;
  }
}

template <class T>
void rmsnorm_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const VectorCRef<T>& gain,
                      const Vector<T>& inv_rms, Matrix<T>& dx, VectorRef<T> dgain) {
  GPUPROF_SCOPE("rmsnorm");
  require_shape("rmsnorm_backward", "dy", dy.rows(), dy.cols(), x.rows(), x.cols());
  require(gain.size() == x.cols() && dgain.size() == x.cols() && inv_rms.size() == x.rows(),
          "rmsnorm_backward", "gain, dgain or inv_rms has the wrong size");
  const T width = static_cast<T>(x.cols());
  dx.resize(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const T r = inv_rms(i);
    const auto dy_g = (dy.row(i).array() * gain.transpose().array()).eval();
    const T projection = (dy_g * x.row(i).array()).sum();
    dx.row(i) = r * dy_g - (r * r * r / width * projection) * x.row(i).array();
    dgain += ((dy.row(i).array() * x.row(i).array()) * r).matrix().transpose();
  }
}

#define TRANSFORMER_INSTANTIATE(T)                                                                         \
  template void rmsnorm_forward<T>(const MatrixCRef<T>&, const VectorCRef<T>&, T, Matrix<T>&, Vector<T>&); \
  template void rmsnorm_backward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, const VectorCRef<T>&,      \
                                    const Vector<T>&, Matrix<T>&, VectorRef<T>);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(double)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cpu
