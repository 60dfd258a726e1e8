// cpu/rope.cpp: rotary position embedding, forward and its transpose.
#include "cpu/rope.hpp"

#include <cmath>

#include "cpu/checks.hpp"

namespace transformer::cpu {
namespace {

// Rotates every interleaved pair by sign · pos · θ^(−2j/d_head). sign = −1 is
// the inverse (= transpose) rotation, which is what the backward pass applies.
template <class T>
void rotate_pairs(MatrixRef<T> x, int batch, int ctx, int heads, T theta, double sign, const char* where) {
  require(batch > 0 && ctx > 0 && heads > 0, where, "batch, ctx and heads must be > 0");
  require(x.rows() == static_cast<Eigen::Index>(batch) * ctx, where,
          std::to_string(x.rows()) +
              " rows, expected batch·ctx = " + std::to_string(static_cast<long long>(batch) * ctx));
  require(x.cols() % heads == 0 && (x.cols() / heads) % 2 == 0, where,
          "width " + std::to_string(x.cols()) + " does not split into " + std::to_string(heads) +
              " heads of even size");
  const Eigen::Index d_head = x.cols() / heads;
  for (int pos = 0; pos < ctx; ++pos) {
    for (Eigen::Index j = 0; j < d_head / 2; ++j) {
      const double angle = pos * std::pow(static_cast<double>(theta),
                                          -2.0 * static_cast<double>(j) / static_cast<double>(d_head));
      const T c = static_cast<T>(std::cos(angle));
      const T s = static_cast<T>(sign * std::sin(angle));
      for (int b = 0; b < batch; ++b) {
        const Eigen::Index row = static_cast<Eigen::Index>(b) * ctx + pos;
        for (int h = 0; h < heads; ++h) {
          const Eigen::Index col = h * d_head + 2 * j;
          const T even = x(row, col), odd = x(row, col + 1);
          x(row, col) = c * even - s * odd;
          x(row, col + 1) = s * even + c * odd;
        }
      }
    }
  }
}

}  // namespace

template <class T>
void rope_forward(MatrixRef<T> x, int batch, int ctx, int heads, T theta) {
  rotate_pairs<T>(x, batch, ctx, heads, theta, +1.0, "rope_forward");
}

template <class T>
void rope_backward(MatrixRef<T> dx, int batch, int ctx, int heads, T theta) {
  rotate_pairs<T>(dx, batch, ctx, heads, theta, -1.0, "rope_backward");
}

template void rope_forward<float>(MatrixRef<float>, int, int, int, float);
template void rope_forward<double>(MatrixRef<double>, int, int, int, double);
template void rope_backward<float>(MatrixRef<float>, int, int, int, float);
template void rope_backward<double>(MatrixRef<double>, int, int, int, double);

}  // namespace transformer::cpu
