// cpu/embedding.cpp: token lookup and its scatter-add gradient.
#include "cpu/embedding.hpp"

#include <gpuprof/scope.hpp>

#include "cpu/checks.hpp"

namespace transformer::cpu {

template <class T>
void embedding_forward(const MatrixCRef<T>& table, const std::vector<std::int32_t>& tokens, Matrix<T>& out) {
  GPUPROF_SCOPE("embedding");
  const auto n = static_cast<Eigen::Index>(tokens.size());
  require_ids("embedding_forward", tokens, n, table.rows());
  out.resize(n, table.cols());
  for (Eigen::Index i = 0; i < n; ++i) out.row(i) = table.row(tokens[i]);
}

template <class T>
void embedding_backward(const MatrixCRef<T>& dout, const std::vector<std::int32_t>& tokens,
                        MatrixRef<T> dtable) {
  GPUPROF_SCOPE("embedding");
  require_ids("embedding_backward", tokens, dout.rows(), dtable.rows());
  require(dout.cols() == dtable.cols(), "embedding_backward", "dout and dtable widths differ");
  for (Eigen::Index i = 0; i < dout.rows(); ++i) dtable.row(tokens[i]) += dout.row(i);
}

#define TRANSFORMER_INSTANTIATE(T)                                                                        \
  template void embedding_forward<T>(const MatrixCRef<T>&, const std::vector<std::int32_t>&, Matrix<T>&); \
  template void embedding_backward<T>(const MatrixCRef<T>&, const std::vector<std::int32_t>&, MatrixRef<T>);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(double)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cpu
