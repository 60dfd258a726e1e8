// cpu/tests/check_support.hpp: random inputs and finite-difference gradient
// checks for the CPU layer and model tests (all in double).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "cpu/tensor.hpp"

namespace transformer::cpu::test {

inline std::mt19937_64& rng() {
  static std::mt19937_64 engine(20250607);
  return engine;
}

inline Matrix<double> random_matrix(Eigen::Index rows, Eigen::Index cols, double scale = 1.0) {
  std::normal_distribution<double> normal(0.0, scale);
  Matrix<double> m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng());
  return m;
}

inline Vector<double> random_vector(Eigen::Index size, double mean, double scale) {
  std::normal_distribution<double> normal(mean, scale);
  Vector<double> v(size);
  for (Eigen::Index i = 0; i < size; ++i) v(i) = normal(rng());
  return v;
}

inline std::vector<std::int32_t> random_ids(std::size_t count, int limit) {
  std::uniform_int_distribution<std::int32_t> pick(0, limit - 1);
  std::vector<std::int32_t> ids(count);
  for (auto& id : ids) id = pick(rng());
  return ids;
}

// Central difference of loss() in the variable `x`, which is restored.
// Error O(h²·f''') + O(ε·|f|/h): about 1e-10 here for h = 1e-6 and |f| ≲ 10^2.
template <class Loss>
double central_difference(Loss&& loss, double& x, double h = 1e-6) {
  const double original = x;
  x = original + h;
  const double up = loss();
  x = original - h;
  const double down = loss();
  x = original;
  return (up - down) / (2 * h);
}

// Tolerance of the gradient checks: |analytic − fd| ≤ 1e-6·max(|fd|, 1e-2).
// The 1e-2 floor turns it into an absolute 1e-8 for near-zero entries, still
// well above the ~1e-10 error of the difference itself.
constexpr double gradient_rtol = 1e-6;
inline bool gradient_matches(double analytic, double numeric) {
  return std::abs(analytic - numeric) <= gradient_rtol * std::max(std::abs(numeric), 1e-2);
}

// Checks analytic[i] against the central difference for each listed element
// of `values` (a tensor the loss reads through a reference).
template <class Loss>
void check_elements(const std::string& what, Loss&& loss, double* values, const double* analytic,
                    const std::vector<Eigen::Index>& indices) {
  int mismatches = 0;
  for (const Eigen::Index i : indices) {
    const double numeric = central_difference(loss, values[i]);
    if (!gradient_matches(analytic[i], numeric) && ++mismatches <= 5)
      FAIL_CHECK(what << "[" << i << "]: analytic " << analytic[i] << " vs finite difference " << numeric);
  }
  CHECK_MESSAGE(mismatches == 0,
                what << ": " << mismatches << " of " << indices.size() << " checked elements differ");
}

template <class Loss>
void check_all_elements(const std::string& what, Loss&& loss, double* values, const double* analytic,
                        Eigen::Index count) {
  std::vector<Eigen::Index> all(static_cast<std::size_t>(count));
  for (Eigen::Index i = 0; i < count; ++i) all[static_cast<std::size_t>(i)] = i;
  check_elements(what, loss, values, analytic, all);
}

// `samples` distinct elements chosen at random (all of them if fewer).
template <class Loss>
void check_sampled_elements(const std::string& what, Loss&& loss, double* values, const double* analytic,
                            Eigen::Index count, std::size_t samples) {
  std::vector<Eigen::Index> indices(static_cast<std::size_t>(count));
  for (Eigen::Index i = 0; i < count; ++i) indices[static_cast<std::size_t>(i)] = i;
  std::shuffle(indices.begin(), indices.end(), rng());
  indices.resize(std::min(samples, indices.size()));
  check_elements(what, loss, values, analytic, indices);
}

// max |a − b| / max(max |b|, tiny): the relative error of a whole tensor.
template <class A, class B>
double relative_error(const A& a, const B& b) {
  const double scale = std::max(b.cwiseAbs().maxCoeff(), 1e-300);
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

}  // namespace transformer::cpu::test
