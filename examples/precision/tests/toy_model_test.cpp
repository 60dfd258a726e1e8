// toy_model_test.cpp: the CPU toy model. The fp64 run's gradients against
// central finite differences of its own loss; the dtypes each policy
// produces; and how far each policy lands from fp64, on fresh random inputs
// (the seed is printed on failure).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "tests/median_over_problems.hpp"
#include "toy_model.hpp"

namespace precision {
namespace {

std::uint64_t fresh_seed() { return std::random_device{}(); }

TEST_CASE("fp64 gradients match central finite differences") {
  const std::uint64_t seed = fresh_seed();
  INFO("seed " << seed);
  const ToyProblem problem = make_toy_problem({}, seed);
  const ToyParameters<double> parameters = widen(problem.parameters);
  const ToyRun analytic = run_toy_model_in_double(problem, parameters);

  // Step 1e-6: truncation error ~1e-12, cancellation ~1e-10 for a loss ~2.
  const double step = 1e-6, tolerance = 1e-7;
  for (auto tensor : {&ToyParameters<double>::fc1, &ToyParameters<double>::ln_gain,
                      &ToyParameters<double>::ln_bias, &ToyParameters<double>::fc2}) {
    for (std::size_t i = 0; i < (parameters.*tensor).size(); ++i) {
      ToyParameters<double> shifted = parameters;
      (shifted.*tensor)[i] += step;
      const double loss_up = run_toy_model_in_double(problem, shifted).loss;
      (shifted.*tensor)[i] -= 2 * step;
      const double loss_down = run_toy_model_in_double(problem, shifted).loss;
      const double numeric = (loss_up - loss_down) / (2 * step);
      INFO("parameter index " << i);
      CHECK(std::abs(numeric - (analytic.gradients.*tensor)[i]) <= tolerance);
    }
  }
}

TEST_CASE("each policy reports the dtypes autocast would give") {
  const ToyProblem problem = make_toy_problem({}, fresh_seed());
  const ToyDtypes fp32 = run_toy_model_on_cpu(problem, Policy::fp32).dtypes;
  CHECK(fp32.parameters == "fp32");
  CHECK(fp32.fc1_output == "fp32");
  CHECK(fp32.layernorm_output == "fp32");
  CHECK(fp32.logits == "fp32");
  CHECK(fp32.loss == "fp32");
  CHECK(fp32.gradients == "fp32");
  for (const auto& [policy, low] :
       {std::pair{Policy::fp16_mixed, "fp16"}, std::pair{Policy::bf16_mixed, "bf16"}}) {
    const ToyDtypes mixed = run_toy_model_on_cpu(problem, policy).dtypes;
    INFO(policy_name(policy));
    CHECK(mixed.parameters == "fp32");
    CHECK(mixed.fc1_output == low);
    CHECK(mixed.layernorm_output == "fp32");
    CHECK(mixed.logits == low);
    CHECK(mixed.loss == "fp32");
    CHECK(mixed.gradients == "fp32");
  }
  CHECK(run_toy_model_in_double(problem, widen(problem.parameters)).dtypes.gradients == "fp64");
}

TEST_CASE("the policies' errors against fp64 follow their GEMM precision") {
  // Medians over 64 fresh problems (median_over_problems.hpp says why). Over
  // 3000 seeds the medians were: loss 2.5e-5 / 2.1e-4 and gradients 1.8e-7 /
  // 6.7e-4 / 5.5e-3 for fp32 / fp16 / bf16: the bounds leave a factor ~4.
  const std::vector<double> median = testing::medians_over_problems(64, [](const ToyProblem& problem) {
    const ToyRun reference = run_toy_model_in_double(problem, widen(problem.parameters));
    std::vector<double> errors;
    for (Policy policy : all_policies()) {
      const ToyRun run = run_toy_model_on_cpu(problem, policy);
      errors.push_back(std::abs(run.loss - reference.loss) / reference.loss);
      errors.push_back(relative_error(run.gradients, reference.gradients));
    }
    return errors;
  });
  const double fp32_loss = median[0], fp32_gradients = median[1];
  const double fp16_loss = median[2], fp16_gradients = median[3];
  const double bf16_loss = median[4], bf16_gradients = median[5];
  // fp32: a few ulps of 2^-24 ≈ 6e-8.
  CHECK(fp32_loss < 1e-6);
  CHECK(fp32_gradients < 1e-6);
  // Mixed: GEMM outputs rounded to 11 (fp16) or 8 (bf16) significant bits,
  // relative 2^-11 ≈ 4.9e-4 and 2^-8 ≈ 3.9e-3 ...
  CHECK(fp16_loss < 1e-4);
  CHECK(fp16_gradients < 3e-3);
  CHECK(bf16_loss < 1e-3);
  CHECK(bf16_gradients < 2.5e-2);
  // ... and that rounding is really there, growing as bits go.
  CHECK(fp16_gradients > 100 * fp32_gradients);
  CHECK(bf16_gradients > 3 * fp16_gradients);
}

TEST_CASE("make_toy_problem rejects empty dimensions") {
  ToyDimensions dims;
  dims.hidden = 0;
  CHECK_THROWS_AS(make_toy_problem(dims, 1), std::invalid_argument);
}

}  // namespace
}  // namespace precision
