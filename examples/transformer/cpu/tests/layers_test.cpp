// cpu/tests/layers_test.cpp: every CPU layer's backward against central finite
// differences (double, random inputs, tolerance in check_support.hpp), and the
// forward passes against direct formulas.
#include <cmath>
#include <complex>
#include <limits>

#include "cpu/adamw.hpp"
#include "cpu/attention.hpp"
#include "cpu/cross_entropy.hpp"
#include "cpu/embedding.hpp"
#include "cpu/linear.hpp"
#include "cpu/rmsnorm.hpp"
#include "cpu/rope.hpp"
#include "cpu/swiglu.hpp"
#include "cpu/tests/check_support.hpp"

namespace transformer::cpu::test {
namespace {

// Σ y ⊙ weights: a scalar whose gradient with respect to y is `weights`.
double weighted_sum(const Matrix<double>& y, const Matrix<double>& weights) {
  return (y.array() * weights.array()).sum();
}

TEST_CASE("linear backward matches finite differences") {
  Matrix<double> x = random_matrix(5, 4), w = random_matrix(3, 4);
  const Matrix<double> weights = random_matrix(5, 3);
  auto loss = [&] {
    Matrix<double> y;
    linear_forward<double>(x, w, y);
    return weighted_sum(y, weights);
  };
  Matrix<double> dx, dw = Matrix<double>::Zero(3, 4);
  linear_backward<double>(weights, x, w, dx, dw);
  check_all_elements("linear dx", loss, x.data(), dx.data(), x.size());
  check_all_elements("linear dw", loss, w.data(), dw.data(), w.size());
  CHECK_THROWS_AS(linear_forward<double>(x, random_matrix(3, 5), dx), std::invalid_argument);
}

TEST_CASE("embedding gathers rows and scatters gradients, repeated ids included") {
  Matrix<double> table = random_matrix(7, 3);
  const std::vector<std::int32_t> tokens = {2, 5, 2, 0, 6, 2};
  Matrix<double> out;
  embedding_forward<double>(table, tokens, out);
  for (std::size_t i = 0; i < tokens.size(); ++i)
    CHECK(out.row(static_cast<Eigen::Index>(i)) == table.row(tokens[i]));
  const Matrix<double> weights = random_matrix(6, 3);
  auto loss = [&] {
    Matrix<double> y;
    embedding_forward<double>(table, tokens, y);
    return weighted_sum(y, weights);
  };
  Matrix<double> dtable = Matrix<double>::Zero(7, 3);
  embedding_backward<double>(weights, tokens, dtable);
  check_all_elements("embedding dtable", loss, table.data(), dtable.data(), table.size());
  CHECK_THROWS_AS(embedding_forward<double>(table, {1, 7}, out), std::invalid_argument);
  CHECK_THROWS_AS(embedding_forward<double>(table, {-1}, out), std::invalid_argument);
}

TEST_CASE("rmsnorm forward matches the formula; backward matches finite differences") {
  Matrix<double> x = random_matrix(6, 8);
  Vector<double> gain = random_vector(8, 1.0, 0.3);
  const double eps = 1e-5;
  Matrix<double> y;
  Vector<double> inv_rms;
  rmsnorm_forward<double>(x, gain, eps, y, inv_rms);
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      const double mean_square = x.row(i).squaredNorm() / 8.0;
      CHECK(y(i, j) == doctest::Approx(x(i, j) / std::sqrt(mean_square + eps) * gain(j)).epsilon(1e-14));
    }
  const Matrix<double> weights = random_matrix(6, 8);
  auto loss = [&] {
    Matrix<double> out;
    Vector<double> r;
    rmsnorm_forward<double>(x, gain, eps, out, r);
    return weighted_sum(out, weights);
  };
  Matrix<double> dx;
  Vector<double> dgain = Vector<double>::Zero(8);
  rmsnorm_backward<double>(weights, x, gain, inv_rms, dx, dgain);
  check_all_elements("rmsnorm dx", loss, x.data(), dx.data(), x.size());
  check_all_elements("rmsnorm dgain", loss, gain.data(), dgain.data(), gain.size());
}

TEST_CASE("rope rotates interleaved pairs by pos·θ^(−2j/d_head); backward is its transpose") {
  const int batch = 2, ctx = 5, heads = 3, d_head = 6;
  const double theta = 10000.0;
  const Matrix<double> x = random_matrix(batch * ctx, heads * d_head);
  Matrix<double> rotated = x;
  rope_forward<double>(rotated, batch, ctx, heads, theta);
  // Direct formula: the pair as a complex number times e^{i·angle}.
  for (int b = 0; b < batch; ++b)
    for (int pos = 0; pos < ctx; ++pos)
      for (int h = 0; h < heads; ++h)
        for (int j = 0; j < d_head / 2; ++j) {
          const Eigen::Index row = b * ctx + pos, col = h * d_head + 2 * j;
          const double angle = pos * std::pow(theta, -2.0 * j / d_head);
          const std::complex<double> want =
              std::complex<double>(x(row, col), x(row, col + 1)) * std::polar(1.0, angle);
          CHECK(rotated(row, col) == doctest::Approx(want.real()).epsilon(1e-13));
          CHECK(rotated(row, col + 1) == doctest::Approx(want.imag()).epsilon(1e-13));
        }
  // Position 0 is the identity, for every sequence of the batch.
  CHECK(rotated.row(0) == x.row(0));
  CHECK(rotated.row(ctx) == x.row(ctx));
  // ⟨rope(x), y⟩ = ⟨x, rope_backward(y)⟩.
  const Matrix<double> y = random_matrix(batch * ctx, heads * d_head);
  Matrix<double> back = y;
  rope_backward<double>(back, batch, ctx, heads, theta);
  CHECK(weighted_sum(rotated, y) == doctest::Approx(weighted_sum(x, back)).epsilon(1e-13));
  Matrix<double> odd_width = random_matrix(batch * ctx, 9);
  CHECK_THROWS_AS(rope_forward<double>(odd_width, batch, ctx, 3, theta), std::invalid_argument);
}

// Attention written the slow, obvious way: per head, per query, a softmax over
// the keys at or before it.
Matrix<double> naive_causal_attention(const Matrix<double>& qkv, int batch, int ctx, int heads) {
  const Eigen::Index d = qkv.cols() / 3, d_head = d / heads;
  Matrix<double> context = Matrix<double>::Zero(qkv.rows(), d);
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < heads; ++h)
      for (int t = 0; t < ctx; ++t) {
        std::vector<double> score(static_cast<std::size_t>(t) + 1);
        double largest = -std::numeric_limits<double>::infinity();
        for (int s = 0; s <= t; ++s) {
          double dot = 0;
          for (Eigen::Index c = 0; c < d_head; ++c)
            dot += qkv(b * ctx + t, h * d_head + c) * qkv(b * ctx + s, d + h * d_head + c);
          score[static_cast<std::size_t>(s)] = dot / std::sqrt(static_cast<double>(d_head));
          largest = std::max(largest, score[static_cast<std::size_t>(s)]);
        }
        double total = 0;
        for (double& value : score) total += (value = std::exp(value - largest));
        for (int s = 0; s <= t; ++s)
          for (Eigen::Index c = 0; c < d_head; ++c)
            context(b * ctx + t, h * d_head + c) +=
                score[static_cast<std::size_t>(s)] / total * qkv(b * ctx + s, 2 * d + h * d_head + c);
      }
  return context;
}

TEST_CASE("causal attention core matches the naive formula and finite differences") {
  const int batch = 2, ctx = 4, heads = 2, d = 6;
  Matrix<double> qkv = random_matrix(batch * ctx, 3 * d);
  Matrix<double> context, probs;
  causal_attention_forward<double>(qkv, batch, ctx, heads, context, probs);
  CHECK(relative_error(context, naive_causal_attention(qkv, batch, ctx, heads)) < 1e-13);
  for (Eigen::Index row = 0; row < probs.rows(); ++row) {
    const Eigen::Index t = row % ctx;
    CHECK(probs.row(row).sum() == doctest::Approx(1.0).epsilon(1e-14));
    CHECK(probs.row(row).tail(ctx - t - 1).cwiseAbs().sum() == 0.0);  // masked exactly
  }
  const Matrix<double> weights = random_matrix(batch * ctx, d);
  auto loss = [&] {
    Matrix<double> out, p;
    causal_attention_forward<double>(qkv, batch, ctx, heads, out, p);
    return weighted_sum(out, weights);
  };
  Matrix<double> dqkv;
  causal_attention_backward<double>(weights, qkv, probs, batch, ctx, heads, dqkv);
  check_all_elements("causal attention dqkv", loss, qkv.data(), dqkv.data(), qkv.size());
}

TEST_CASE("attention layer backward matches finite differences") {
  const int batch = 2, ctx = 4, heads = 2, d = 8;
  const double theta = 10000.0;
  Matrix<double> x = random_matrix(batch * ctx, d);
  Matrix<double> wqkv = random_matrix(3 * d, d, 0.4), wo = random_matrix(d, d, 0.4);
  const Matrix<double> weights = random_matrix(batch * ctx, d);
  auto loss = [&] {
    Matrix<double> y;
    AttentionCache<double> cache;
    attention_forward<double>(x, wqkv, wo, batch, ctx, heads, theta, y, cache);
    return weighted_sum(y, weights);
  };
  Matrix<double> y, dx;
  AttentionCache<double> cache;
  attention_forward<double>(x, wqkv, wo, batch, ctx, heads, theta, y, cache);
  Matrix<double> dwqkv = Matrix<double>::Zero(3 * d, d), dwo = Matrix<double>::Zero(d, d);
  attention_backward<double>(weights, x, wqkv, wo, batch, ctx, heads, theta, cache, dx, dwqkv, dwo);
  check_all_elements("attention dx", loss, x.data(), dx.data(), x.size());
  check_all_elements("attention dwqkv", loss, wqkv.data(), dwqkv.data(), wqkv.size());
  check_all_elements("attention dwo", loss, wo.data(), dwo.data(), wo.size());
}

TEST_CASE("swiglu forward matches the formula; backward matches finite differences") {
  const int n = 5, d = 4, d_ff = 6;
  Matrix<double> x = random_matrix(n, d);
  Matrix<double> w13 = random_matrix(2 * d_ff, d, 0.5), w2 = random_matrix(d, d_ff, 0.5);
  Matrix<double> y;
  SwigluCache<double> cache;
  swiglu_forward<double>(x, w13, w2, y, cache);
  const Matrix<double> a = x * w13.topRows(d_ff).transpose(), b = x * w13.bottomRows(d_ff).transpose();
  const Matrix<double> silu_a = a.array() / (1.0 + (-a.array()).exp());
  const Matrix<double> expected = (silu_a.array() * b.array()).matrix() * w2.transpose();
  CHECK(relative_error(y, expected) < 1e-13);

  const Matrix<double> weights = random_matrix(n, d);
  auto loss = [&] {
    Matrix<double> out;
    SwigluCache<double> c;
    swiglu_forward<double>(x, w13, w2, out, c);
    return weighted_sum(out, weights);
  };
  Matrix<double> dx, dw13 = Matrix<double>::Zero(2 * d_ff, d), dw2 = Matrix<double>::Zero(d, d_ff);
  swiglu_backward<double>(weights, x, w13, w2, cache, dx, dw13, dw2);
  check_all_elements("swiglu dx", loss, x.data(), dx.data(), x.size());
  check_all_elements("swiglu dw13", loss, w13.data(), dw13.data(), w13.size());
  check_all_elements("swiglu dw2", loss, w2.data(), dw2.data(), w2.size());
}

TEST_CASE("cross-entropy is the mean of logsumexp − target logit, stable for large logits") {
  Matrix<double> logits = random_matrix(6, 9, 2.0);
  const std::vector<std::int32_t> targets = {0, 8, 3, 3, 5, 1};
  Vector<double> lse;
  const double loss = cross_entropy_forward<double>(logits, targets, lse);
  double expected = 0;
  for (Eigen::Index i = 0; i < 6; ++i)
    expected += std::log(logits.row(i).array().exp().sum()) - logits(i, targets[static_cast<std::size_t>(i)]);
  CHECK(loss == doctest::Approx(expected / 6).epsilon(1e-14));

  // Shifting a row by a constant leaves the loss unchanged, even where exp() overflows.
  Matrix<double> shifted = logits.array() + 1000.0;
  Vector<double> shifted_lse;
  CHECK(cross_entropy_forward<double>(shifted, targets, shifted_lse) == doctest::Approx(loss).epsilon(1e-12));

  auto loss_fn = [&] {
    Vector<double> r;
    return cross_entropy_forward<double>(logits, targets, r);
  };
  Matrix<double> dlogits;
  cross_entropy_backward<double>(logits, targets, lse, 1.0, dlogits);
  check_all_elements("cross-entropy dlogits", loss_fn, logits.data(), dlogits.data(), logits.size());
  CHECK_THROWS_AS(cross_entropy_forward<double>(logits, {0, 1, 2, 3, 4, 9}, lse), std::invalid_argument);
}

TEST_CASE("AdamW follows docs/model.md's formula by hand over three steps") {
  AdamWConfig config;
  config.lr = 0.01f;
  config.weight_decay = 0.1f;
  Vector<double> params = random_vector(4, 0.0, 1.0);
  AdamWState<double> state(4);
  std::vector<double> theta(params.data(), params.data() + 4), m(4, 0.0), v(4, 0.0);
  const double lr = config.lr, b1 = config.beta1, b2 = config.beta2, eps = config.eps,
               decay = config.weight_decay;
  for (int t = 1; t <= 3; ++t) {
    const Vector<double> grads = random_vector(4, 0.0, 1.0);
    const double norm = adamw_step<double>(config, params, grads, state);
    CHECK(norm == doctest::Approx(grads.norm()).epsilon(1e-15));
    for (std::size_t i = 0; i < 4; ++i) {
      const double g = grads(static_cast<Eigen::Index>(i));
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
      theta[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
      theta[i] -= lr * decay * theta[i];  // decay after the update
      CHECK(params(static_cast<Eigen::Index>(i)) == doctest::Approx(theta[i]).epsilon(1e-13));
    }
  }
  CHECK(state.step == 3);
}

TEST_CASE("AdamW clipping scales the gradients by M/(‖g‖+1e-6) only above M") {
  CHECK(clip_scale(5.0, 0.0) == 1.0);  // off
  CHECK(clip_scale(0.5, 1.0) == 1.0);  // below the threshold
  CHECK(clip_scale(4.0, 2.0) == doctest::Approx(2.0 / (4.0 + 1e-6)).epsilon(1e-15));

  AdamWConfig clipped;
  clipped.clip_norm = 0.5f;
  AdamWConfig plain;
  const Vector<double> start = random_vector(6, 0.0, 1.0);
  const Vector<double> grads = random_vector(6, 0.0, 3.0);  // norm ≫ 0.5
  Vector<double> a = start, b = start;
  AdamWState<double> state_a(6), state_b(6);
  adamw_step<double>(clipped, a, grads, state_a);
  const Vector<double> scaled = grads * (0.5 / (grads.norm() + 1e-6));
  adamw_step<double>(plain, b, scaled, state_b);
  CHECK(relative_error(state_a.m, state_b.m) < 1e-15);
  CHECK(relative_error(a, b) < 1e-15);
}

}  // namespace
}  // namespace transformer::cpu::test
