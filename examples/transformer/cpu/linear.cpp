// cpu/linear.cpp: y = x·Wᵀ and its gradients.
#include "cpu/linear.hpp"

#include "cpu/checks.hpp"

namespace transformer::cpu {

template <class T>
void linear_forward(const MatrixCRef<T>& x, const MatrixCRef<T>& w, Matrix<T>& y) {
  require(x.cols() == w.cols(), "linear_forward",
          "x has " + std::to_string(x.cols()) + " features, w expects " + std::to_string(w.cols()));
  y.noalias() = x * w.transpose();
}

template <class T>
void linear_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const MatrixCRef<T>& w, Matrix<T>& dx,
                     MatrixRef<T> dw) {
  require_shape("linear_backward", "dy", dy.rows(), dy.cols(), x.rows(), w.rows());
  require_shape("linear_backward", "dw", dw.rows(), dw.cols(), w.rows(), w.cols());
  dx.noalias() = dy * w;
  dw.noalias() += dy.transpose() * x;
}

#define TRANSFORMER_INSTANTIATE(T)                                                                   \
  template void linear_forward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, Matrix<T>&);           \
  template void linear_backward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, const MatrixCRef<T>&, \
                                   Matrix<T>&, MatrixRef<T>);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(double)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cpu
