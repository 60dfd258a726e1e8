// gpu_test.cpp: the GPU halves of both demos against the CPU. The device
// sums must equal docs/model.md and the CPU bit for bit; the toy model's dtypes
// must match and its loss and gradients agree within a few ulps of the GEMM
// format (cuBLAS and Eigen accumulate fp32 in different orders, which can
// flip an fp16/bf16 rounding by one ulp). Runs only where a device is usable.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "gpu.hpp"
#include "tests/expected_accumulation.hpp"
#include "tests/median_over_problems.hpp"

namespace precision {
namespace {

TEST_CASE("GPU accumulation equals docs/model.md and the CPU exactly") {
  const std::vector<AccumulationRow> gpu = accumulate_on_gpu();
  testing::check_against_model(gpu);
  const std::vector<AccumulationRow> cpu = accumulate_on_cpu();
  REQUIRE(gpu.size() == cpu.size());
  for (std::size_t i = 0; i < gpu.size(); ++i) {
    INFO("row " << i);
    CHECK(gpu[i].accumulator_epsilon == cpu[i].accumulator_epsilon);
  }
}

TEST_CASE("GPU toy model: same dtypes as the CPU") {
  const ToyProblem problem = make_toy_problem({}, std::random_device{}());
  for (Policy policy : all_policies()) {
    INFO(policy_name(policy));
    const ToyDtypes cpu = run_toy_model_on_cpu(problem, policy).dtypes;
    const ToyDtypes gpu = run_toy_model_on_gpu(problem, policy).dtypes;
    CHECK(gpu.parameters == cpu.parameters);
    CHECK(gpu.fc1_output == cpu.fc1_output);
    CHECK(gpu.layernorm_output == cpu.layernorm_output);
    CHECK(gpu.logits == cpu.logits);
    CHECK(gpu.loss == cpu.loss);
    CHECK(gpu.gradients == cpu.gradients);
  }
}

TEST_CASE("GPU toy model: loss and gradients agree with the CPU") {
  // Medians over 16 fresh problems (median_over_problems.hpp says why) of
  // |Δloss|/loss and ‖Δgrad‖/‖grad‖, GPU vs CPU, per policy. The two differ
  // only in fp32 summation order (and Eigen's vectorised rsqrt), which flips
  // an fp16/bf16 rounding rarely: the bounds allow a few flipped roundings
  // yet sit well below each policy's own error against fp64 (medians 6.7e-4
  // and 5.5e-3), so a GPU path rounding differently from the CPU's fails.
  const std::vector<double> median = testing::medians_over_problems(16, [](const ToyProblem& problem) {
    std::vector<double> differences;
    for (Policy policy : all_policies()) {
      const ToyRun cpu = run_toy_model_on_cpu(problem, policy);
      const ToyRun gpu = run_toy_model_on_gpu(problem, policy);
      differences.push_back(std::abs(gpu.loss - cpu.loss) / cpu.loss);
      differences.push_back(relative_error(gpu.gradients, cpu.gradients));
    }
    return differences;
  });
  CHECK(median[0] <= 1e-6);    // fp32 loss
  CHECK(median[1] <= 2e-6);    // fp32 gradients
  CHECK(median[2] <= 2e-4);    // fp16 loss
  CHECK(median[3] <= 2e-4);    // fp16 gradients
  CHECK(median[4] <= 1.5e-3);  // bf16 loss
  CHECK(median[5] <= 1.5e-3);  // bf16 gradients
}

}  // namespace
}  // namespace precision
