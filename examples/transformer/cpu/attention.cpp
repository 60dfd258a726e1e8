// cpu/attention.cpp: causal multi-head attention with RoPE, forward and backward.
//
// The scope names inside causal_attention_forward are the course's NVTX range
// names, verbatim, so CPU and GPU profiles line up with the handout.
#include "cpu/attention.hpp"

#include <cmath>

#include <gpuprof/scope.hpp>

#include "cpu/checks.hpp"
#include "cpu/linear.hpp"
#include "cpu/rope.hpp"

namespace transformer::cpu {
namespace {

struct HeadGeometry {
  Eigen::Index d, d_head;
};

HeadGeometry check_attention_shapes(const char* where, Eigen::Index qkv_rows, Eigen::Index qkv_cols,
                                    int batch, int ctx, int heads) {
  require(batch > 0 && ctx > 0 && heads > 0, where, "batch, ctx and heads must be > 0");
  require(qkv_rows == static_cast<Eigen::Index>(batch) * ctx, where,
          "qkv has " + std::to_string(qkv_rows) + " rows, expected batch·ctx");
  require(qkv_cols % 3 == 0 && (qkv_cols / 3) % heads == 0, where,
          "qkv width " + std::to_string(qkv_cols) + " is not 3·heads·d_head");
  return {qkv_cols / 3, qkv_cols / 3 / heads};
}

}  // namespace

template <class T>
void causal_attention_forward(const MatrixCRef<T>& qkv, int batch, int ctx, int heads, Matrix<T>& context,
                              Matrix<T>& probs) {
  const auto [d, d_head] =
      check_attention_shapes("causal_attention_forward", qkv.rows(), qkv.cols(), batch, ctx, heads);
  const T scale = T(1) / std::sqrt(static_cast<T>(d_head));
  const Eigen::Index seq = ctx;
  probs.resize(static_cast<Eigen::Index>(batch) * heads * seq, seq);
  context.resize(qkv.rows(), d);

  GPUPROF_SCOPE("scaled dot product attention");
  {
    GPUPROF_SCOPE("computing attention scores");
    for (int b = 0; b < batch; ++b)
      for (int h = 0; h < heads; ++h) {
        auto scores = probs.block((static_cast<Eigen::Index>(b) * heads + h) * seq, 0, seq, seq);
        const auto q = qkv.block(b * seq, h * d_head, seq, d_head);
        const auto k = qkv.block(b * seq, d + h * d_head, seq, d_head);
        scores.noalias() = q * k.transpose();
        scores *= scale;  // the full square, as the course computes it; softmax masks
      }
  }
  {
    GPUPROF_SCOPE("computing softmax");
    // The causal mask: keys after the query get probability exactly 0. Only
    // the visible head of each row goes through exp, because writing −inf and
    // exponentiating is not exact here: Eigen's vectorised exp clamps its
    // argument near −708 and returns a denormal, not 0.
    for (Eigen::Index row = 0; row < probs.rows(); ++row) {
      const Eigen::Index visible = row % seq + 1;  // keys 0 … query position
      auto p = probs.row(row).head(visible);
      p = (p.array() - p.maxCoeff()).exp();
      p /= p.sum();
      probs.row(row).tail(seq - visible).setZero();
    }
  }
  {
    GPUPROF_SCOPE("final matmul");
    for (int b = 0; b < batch; ++b)
      for (int h = 0; h < heads; ++h) {
        const auto p = probs.block((static_cast<Eigen::Index>(b) * heads + h) * seq, 0, seq, seq);
        const auto v = qkv.block(b * seq, 2 * d + h * d_head, seq, d_head);
        context.block(b * seq, h * d_head, seq, d_head).noalias() = p * v;
      }
  }
}

// Per head, with S = q·kᵀ·scale and P = softmax(S):
//   dv = Pᵀ·dO,  dP = dO·vᵀ,  dS = P ⊙ (dP − rowsum(P ⊙ dP)),
//   dq = scale·dS·k,  dk = scale·dSᵀ·q.
// Masked entries have P = 0, hence dS = 0: the mask needs no special case.
template <class T>
void causal_attention_backward(const MatrixCRef<T>& dcontext, const MatrixCRef<T>& qkv,
                               const MatrixCRef<T>& probs, int batch, int ctx, int heads, Matrix<T>& dqkv) {
  const auto [d, d_head] =
      check_attention_shapes("causal_attention_backward", qkv.rows(), qkv.cols(), batch, ctx, heads);
  const Eigen::Index seq = ctx;
  require_shape("causal_attention_backward", "dcontext", dcontext.rows(), dcontext.cols(), qkv.rows(), d);
  require_shape("causal_attention_backward", "probs", probs.rows(), probs.cols(),
                static_cast<Eigen::Index>(batch) * heads * seq, seq);
  const T scale = T(1) / std::sqrt(static_cast<T>(d_head));
  dqkv.resize(qkv.rows(), 3 * d);
  Matrix<T> dscores(seq, seq);

  GPUPROF_SCOPE("scaled dot product attention");
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h) {
      const auto p = probs.block((static_cast<Eigen::Index>(b) * heads + h) * seq, 0, seq, seq);
      const auto d_out = dcontext.block(b * seq, h * d_head, seq, d_head);
      const auto q = qkv.block(b * seq, h * d_head, seq, d_head);
      const auto k = qkv.block(b * seq, d + h * d_head, seq, d_head);
      const auto v = qkv.block(b * seq, 2 * d + h * d_head, seq, d_head);
      dqkv.block(b * seq, 2 * d + h * d_head, seq, d_head).noalias() = p.transpose() * d_out;
      dscores.noalias() = d_out * v.transpose();
      const Vector<T> row_dot = (p.array() * dscores.array()).rowwise().sum();
      dscores = (p.array() * (dscores.array().colwise() - row_dot.array())) * scale;
      dqkv.block(b * seq, h * d_head, seq, d_head).noalias() = dscores * k;
      dqkv.block(b * seq, d + h * d_head, seq, d_head).noalias() = dscores.transpose() * q;
    }
}

template <class T>
void attention_forward(const MatrixCRef<T>& x, const MatrixCRef<T>& wqkv, const MatrixCRef<T>& wo, int batch,
                       int ctx, int heads, T rope_theta, Matrix<T>& y, AttentionCache<T>& cache) {
  GPUPROF_SCOPE("attention");
  const Eigen::Index d = x.cols();
  require_shape("attention_forward", "wqkv", wqkv.rows(), wqkv.cols(), 3 * d, d);
  require_shape("attention_forward", "wo", wo.rows(), wo.cols(), d, d);
  linear_forward<T>(x, wqkv, cache.qkv);
  rope_forward<T>(cache.qkv.leftCols(2 * d), batch, ctx, 2 * heads, rope_theta);
  causal_attention_forward<T>(cache.qkv, batch, ctx, heads, cache.context, cache.probs);
  linear_forward<T>(cache.context, wo, y);
}

template <class T>
void attention_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const MatrixCRef<T>& wqkv,
                        const MatrixCRef<T>& wo, int batch, int ctx, int heads, T rope_theta,
                        const AttentionCache<T>& cache, Matrix<T>& dx, MatrixRef<T> dwqkv, MatrixRef<T> dwo) {
  GPUPROF_SCOPE("attention");
  const Eigen::Index d = x.cols();
  Matrix<T> dcontext, dqkv;
  linear_backward<T>(dy, cache.context, wo, dcontext, dwo);
  causal_attention_backward<T>(dcontext, cache.qkv, cache.probs, batch, ctx, heads, dqkv);
  rope_backward<T>(dqkv.leftCols(2 * d), batch, ctx, 2 * heads, rope_theta);
  linear_backward<T>(dqkv, x, wqkv, dx, dwqkv);
}

#define TRANSFORMER_INSTANTIATE(T)                                                                          \
  template void causal_attention_forward<T>(const MatrixCRef<T>&, int, int, int, Matrix<T>&, Matrix<T>&);   \
  template void causal_attention_backward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&,                    \
                                             const MatrixCRef<T>&, int, int, int, Matrix<T>&);              \
  template void attention_forward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, const MatrixCRef<T>&, int, \
                                     int, int, T, Matrix<T>&, AttentionCache<T>&);                          \
  template void attention_backward<T>(const MatrixCRef<T>&, const MatrixCRef<T>&, const MatrixCRef<T>&,     \
                                      const MatrixCRef<T>&, int, int, int, T, const AttentionCache<T>&,     \
                                      Matrix<T>&, MatrixRef<T>, MatrixRef<T>);
TRANSFORMER_INSTANTIATE(float)
TRANSFORMER_INSTANTIATE(double)
#undef TRANSFORMER_INSTANTIATE

}  // namespace transformer::cpu
