// layernorm_statistics.hpp: why autocast keeps LayerNorm in fp32 (the
// course's question (b)), shown on numbers: the mean and variance of a
// LayerNorm row computed with fp32, fp16 and bf16 arithmetic, by the one-pass
// formula E[x²] − E[x]² and by the two-pass formula E[(x − mean)²], against
// an fp64 reference.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

namespace precision {

enum class VarianceFormula { one_pass, two_pass };
const char* formula_name(VarianceFormula formula);

struct LayerNormInputs {
  std::string label;
  std::vector<double> values;  // one row; exactly representable in fp16
};

// Rows that break fp16 statistics: values near 300, whose squares pass fp16's
// largest finite value 65504, and values with a large common offset (64 +
// small steps, squares still finite in fp16), where E[x²] − E[x]² cancels.
std::vector<LayerNormInputs> layernorm_demo_inputs();

struct LayerNormStatistics {
  std::string dtype;  // arithmetic of the sums, the mean and the variance
  VarianceFormula formula = VarianceFormula::two_pass;
  double mean = 0;
  double variance = 0;          // may be inf or NaN (overflow), or negative (cancellation)
  double max_output_error = 0;  // max |normalized − fp64 normalized|; NaN if any output is
};

// fp64 two-pass first (the reference), then fp32, fp16, bf16, each with both
// formulas. Inputs are converted to the dtype first (they are fp16-exact, so
// only bf16 may round them).
std::vector<LayerNormStatistics> layernorm_statistics(const LayerNormInputs& inputs);

void print_layernorm_statistics(std::ostream& out, const LayerNormInputs& inputs,
                                const std::vector<LayerNormStatistics>& rows);

}  // namespace precision
