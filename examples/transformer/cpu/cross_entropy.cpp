// cpu/cross_entropy.cpp: mean cross-entropy with a max-subtracted logsumexp.
#include "cpu/cross_entropy.hpp"

#include <cmath>

#include <gpuprof/scope.hpp>

#include "cpu/checks.hpp"

namespace transformer::cpu {

template <class T>
T cross_entropy_forward(const MatrixCRef<T>& logits, const std::vector<std::int32_t>& targets,
                        Vector<T>& logsumexp) {
  GPUPROF_SCOPE("cross_entropy");
  require_ids("cross_entropy_forward", targets, logits.rows(), logits.cols());
  require(logits.rows() > 0, "cross_entropy_forward", "no positions");
  logsumexp.resize(logits.rows());
  double total = 0;  // a double sum keeps the float mean independent of N's size
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const T row_max = logits.row(i).maxCoeff();
    logsumexp(i) = row_max + std::log((logits.row(i).array() - row_max).exp().sum());
    total += static_cast<double>(logsumexp(i) - logits(i, targets[i]));
  }
  return static_cast<T>(total / static_cast<double>(logits.rows()));
}

template <class T>
void cross_entropy_backward(const MatrixCRef<T>& logits, const std::vector<std::int32_t>& targets,
                            const Vector<T>& logsumexp, T dloss, Matrix<T>& dlogits) {
  GPUPROF_SCOPE("cross_entropy");
  require_ids("cross_entropy_backward", targets, logits.rows(), logits.cols());
  require(logsumexp.size() == logits.rows(), "cross_entropy_backward", "logsumexp size differs");
  const T weight = dloss / static_cast<T>(logits.rows());
  dlogits = ((logits.array().colwise() - logsumexp.array()).exp()) * weight;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) dlogits(i, targets[i]) -= weight;
}

#define TRANSFORMER_INSTANTIATE(T)                                                                         \
  template T cross_entropy_forward<T>(const MatrixCRef<T>&, const std::vector<std::int32_t>&, Vector<T>&); \
  template void cross_entropy_backward<T>(const MatrixCRef<T>&, const std::vector<std::int32_t>&,          \
                                          const Vector<T>&, T, Matrix<T>&);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(double)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cpu
