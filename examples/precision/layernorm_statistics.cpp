// layernorm_statistics.cpp: LayerNorm's mean and variance in each dtype.
// Sums run left to right in the dtype itself, every operation rounding to
// it (Eigen's half and bfloat16 round each result), as a naive fp16 kernel
// would; the normalization that follows is done in fp64, so the output
// errors come from the statistics alone.
#include "layernorm_statistics.hpp"

#include <cmath>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <type_traits>

#include <gpuprof/table.hpp>

#include "accumulation.hpp"  // python_repr
#include "eigen_dtypes.hpp"
#include "toy_model.hpp"  // kLayerNormEpsilon

namespace precision {
namespace {

// Eigen's half and bfloat16 convert only through float; double must not
// (rounding the fp64 reference row to fp32 would make it no reference).
template <class T>
double to_double(T value) {
  if constexpr (std::is_same_v<T, double>) {
    return value;
  } else {
    return static_cast<double>(static_cast<float>(value));
  }
}

template <class T>
LayerNormStatistics statistics_in(const std::vector<double>& values, VarianceFormula formula) {
  // Through fp32: the inputs are fp16-exact, so only bf16 rounds here.
  std::vector<T> row;
  for (double value : values) row.push_back(static_cast<T>(static_cast<float>(value)));
  const T count = static_cast<T>(static_cast<float>(row.size()));

  T sum = T(0.0f);
  for (T x : row) sum = sum + x;
  const T mean = sum / count;
  T variance = T(0.0f);
  if (formula == VarianceFormula::one_pass) {
    T sum_of_squares = T(0.0f);
    for (T x : row) sum_of_squares = sum_of_squares + x * x;
    variance = sum_of_squares / count - mean * mean;
  } else {
    T sum_of_squared_deviations = T(0.0f);
    for (T x : row) sum_of_squared_deviations = sum_of_squared_deviations + (x - mean) * (x - mean);
    variance = sum_of_squared_deviations / count;
  }

  LayerNormStatistics result;
  result.dtype = dtype_name<T>();
  result.formula = formula;
  result.mean = to_double(mean);
  result.variance = to_double(variance);
  return result;
}

std::vector<double> normalized(const std::vector<double>& values, double mean, double variance) {
  std::vector<double> out;
  for (double value : values) out.push_back((value - mean) / std::sqrt(variance + kLayerNormEpsilon));
  return out;
}

std::string formatted(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return python_repr(value);
}

}  // namespace

const char* formula_name(VarianceFormula formula) {
  return formula == VarianceFormula::one_pass ? "E[x²]−E[x]²" : "E[(x−mean)²]";
}

std::vector<LayerNormInputs> layernorm_demo_inputs() {
  return {
      {"values near 300 (squares > 65504, fp16's largest finite value)",
       {290, 295, 298, 301, 303, 306, 309, 311, 314, 318}},
      {"common offset 64 plus steps of 1/16 (no overflow: the digits cancel)",
       {64, 64.0625, 64.125, 64.25, 64.3125, 64.375, 64.5, 64.625, 64.6875, 64.75}},
  };
}

std::vector<LayerNormStatistics> layernorm_statistics(const LayerNormInputs& inputs) {
  if (inputs.values.empty()) throw std::invalid_argument("layernorm_statistics: empty row");
  std::vector<LayerNormStatistics> rows{statistics_in<double>(inputs.values, VarianceFormula::two_pass)};
  for (VarianceFormula formula : {VarianceFormula::one_pass, VarianceFormula::two_pass}) {
    rows.push_back(statistics_in<float>(inputs.values, formula));
    rows.push_back(statistics_in<Eigen::half>(inputs.values, formula));
    rows.push_back(statistics_in<Eigen::bfloat16>(inputs.values, formula));
  }
  const std::vector<double> reference = normalized(inputs.values, rows.front().mean, rows.front().variance);
  for (LayerNormStatistics& row : rows) {
    const std::vector<double> output = normalized(inputs.values, row.mean, row.variance);
    for (std::size_t i = 0; i < output.size(); ++i) {
      const double error = std::abs(output[i] - reference[i]);
      if (std::isnan(error)) row.max_output_error = error;  // NaN wins: the row is unusable
      else if (!std::isnan(row.max_output_error))
        row.max_output_error = std::max(row.max_output_error, error);
    }
  }
  return rows;
}

void print_layernorm_statistics(std::ostream& out, const LayerNormInputs& inputs,
                                const std::vector<LayerNormStatistics>& rows) {
  out << "LayerNorm statistics, " << inputs.label << ":\n  x =";
  for (double value : inputs.values) out << ' ' << formatted(value);
  out << '\n';
  gpuprof::Table table({{"dtype", gpuprof::Align::left, 5},
                        {"variance as", gpuprof::Align::left, 14},
                        {"mean", gpuprof::Align::left, 19},
                        {"variance", gpuprof::Align::left, 21},
                        {"max |output error|"}});
  for (const LayerNormStatistics& row : rows)
    table.add_row({row.dtype, formula_name(row.formula), formatted(row.mean), formatted(row.variance),
                   formatted(row.max_output_error)});
  table.print(out, {"  ", " "});
}

}  // namespace precision
