// median_over_problems.hpp: a robust statistic for tolerance tests on
// random toy problems. Mixed-precision errors have a heavy tail (a ReLU mask
// flipped by one rounding, a LayerNorm row with a tiny variance amplifying
// an ulp), so single-problem thresholds are either loose or flaky; the
// median over fresh problems is neither.
#pragma once
#include <algorithm>
#include <random>
#include <vector>

#include "toy_model.hpp"

namespace precision::testing {

// metric(problem) → one value per problem, each from a fresh random seed;
// returns the medians of each component (metric returns a vector of them).
template <class Metric>
std::vector<double> medians_over_problems(int problems, Metric metric) {
  std::random_device entropy;
  std::vector<std::vector<double>> samples;
  for (int i = 0; i < problems; ++i) {
    const std::vector<double> values = metric(make_toy_problem({}, entropy()));
    samples.resize(values.size());
    for (std::size_t j = 0; j < values.size(); ++j) samples[j].push_back(values[j]);
  }
  std::vector<double> medians;
  for (std::vector<double>& component : samples) {
    std::nth_element(component.begin(), component.begin() + component.size() / 2, component.end());
    medians.push_back(component[component.size() / 2]);
  }
  return medians;
}

}  // namespace precision::testing
