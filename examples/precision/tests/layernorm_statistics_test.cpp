// layernorm_statistics_test.cpp: the LayerNorm question (b) in numbers:
// fp16 overflows on x² near 300 and cancels with a common offset, bf16 never
// overflows but loses digits, fp32 two-pass stays close to fp64.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>

#include "layernorm_statistics.hpp"

namespace precision {
namespace {

const LayerNormStatistics& find(const std::vector<LayerNormStatistics>& rows, const std::string& dtype,
                                VarianceFormula formula) {
  for (const LayerNormStatistics& row : rows)
    if (row.dtype == dtype && row.formula == formula) return row;
  throw std::runtime_error("no row for " + dtype);
}

double relative(double value, double reference) { return std::abs(value - reference) / reference; }

TEST_CASE("the fp64 reference row is the plain two-pass mean and variance") {
  for (const LayerNormInputs& inputs : layernorm_demo_inputs()) {
    const std::vector<double>& x = inputs.values;
    const double mean = std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
    double squares = 0;
    for (double value : x) squares += (value - mean) * (value - mean);
    const std::vector<LayerNormStatistics> rows = layernorm_statistics(inputs);
    const LayerNormStatistics& reference = rows.front();
    CHECK(reference.dtype == "fp64");
    // Same formula, possibly another summation order (Eigen vectorises its
    // sums differently per CPU), so equal to double rounding, not to the bit.
    CHECK(reference.mean == doctest::Approx(mean).epsilon(1e-12));
    CHECK(reference.variance == doctest::Approx(squares / static_cast<double>(x.size())).epsilon(1e-12));
    CHECK(reference.max_output_error == 0.0);
  }
}

TEST_CASE("values near 300: fp16 overflows on x², bf16 does not but loses digits") {
  const LayerNormInputs inputs = layernorm_demo_inputs().at(0);
  for (double x : inputs.values) REQUIRE(x * x > 65504.0);
  const std::vector<LayerNormStatistics> rows = layernorm_statistics(inputs);
  const double variance = rows.front().variance;

  CHECK_FALSE(std::isfinite(find(rows, "fp16", VarianceFormula::one_pass).variance));
  CHECK(relative(find(rows, "fp16", VarianceFormula::two_pass).variance, variance) < 1e-2);
  CHECK(std::isfinite(find(rows, "bf16", VarianceFormula::one_pass).variance));
  CHECK(relative(find(rows, "bf16", VarianceFormula::one_pass).variance, variance) > 1.0);
  CHECK(find(rows, "bf16", VarianceFormula::two_pass).max_output_error > 1e-2);
  CHECK(relative(find(rows, "fp32", VarianceFormula::two_pass).variance, variance) < 1e-6);
}

TEST_CASE("a common offset: E[x²] − E[x]² cancels without any overflow") {
  const std::vector<LayerNormStatistics> rows = layernorm_statistics(layernorm_demo_inputs().at(1));
  const double variance = rows.front().variance;
  const LayerNormStatistics& fp16_one_pass = find(rows, "fp16", VarianceFormula::one_pass);
  CHECK(std::isfinite(fp16_one_pass.variance));
  CHECK(relative(fp16_one_pass.variance, variance) > 1.0);
  CHECK(find(rows, "fp32", VarianceFormula::one_pass).max_output_error >
        100 * find(rows, "fp32", VarianceFormula::two_pass).max_output_error);
  CHECK(find(rows, "fp32", VarianceFormula::two_pass).max_output_error < 1e-4);
}

}  // namespace
}  // namespace precision
