// profile/tests/questions_test.cpp: answers (a)-(e) on the synthetic runs of
// scenario.hpp; every expected number is worked out from the durations listed there.
#include <doctest/doctest.h>

#include <stdexcept>

#include "profile/one_step.hpp"
#include "profile/questions.hpp"
#include "profile/tests/scenario.hpp"

using namespace transformer::profile;
using namespace transformer::profile::testing;

namespace {
constexpr double forward_kernels_ns = 300 + 200 + 2 * 100 + 1000 + 50 + 5;  // 1755
constexpr double forward_activities_ns = forward_kernels_ns + 10;           // with the memset
constexpr double train_activities_ns = forward_activities_ns + 3000 + 400 + 500;

const CategoryRow& category(const ProfileAnswers& answers, const std::string& name) {
  for (const CategoryRow& row : answers.categories)
    if (row.category == name) return row;
  FAIL("no category " << name);
  return answers.categories.front();
}
}  // namespace

TEST_CASE("(a) forward time: CUDA events, kernel sum and projection over the timed forwards only") {
  const ProfileAnswers answers = scenario_answers();
  CHECK(answers.forward.forwards == timed_steps);
  REQUIRE(answers.forward.event_ms.has_value());
  CHECK(*answers.forward.event_ms == doctest::Approx((forward_event_ms[0] + forward_event_ms[1]) / 2));
  CHECK(answers.forward.kernel_sum_ms == doctest::Approx(forward_kernels_ns * 1e-6));
  // Eight activities back to back, gap_ns apart: seven gaps inside the projection.
  CHECK(answers.forward.projection_ms ==
        doctest::Approx((forward_activities_ns + 7 * SyntheticRun::gap_ns) * 1e-6));
}

TEST_CASE("(a) without CUDA-event times the event answer is empty, not zero") {
  gpuprof::Report inference = captured_run(false);
  for (gpuprof::ScopeNode& node : inference.nodes) node.gpu_ms = gpuprof::Summary{};
  const ProfileAnswers answers =
      answer_questions(inference, inference_root, captured_run(true), train_root, scenario_flops());
  CHECK_FALSE(answers.forward.event_ms.has_value());
}

TEST_CASE("(b) top kernel of the forward pass, per forward, and of forward + backward") {
  const ProfileAnswers answers = scenario_answers();
  CHECK(answers.top_forward.base_name == "ffn_gemm");
  CHECK(answers.top_forward.instances_per_pass == doctest::Approx(1));
  CHECK(answers.top_forward.percent == doctest::Approx(100 * 1000 / forward_kernels_ns));
  CHECK(answers.top_forward.ms_per_pass == doctest::Approx(1000e-6));
  CHECK(answers.train_steps == timed_steps);
  CHECK(answers.top_forward_backward.base_name == "backward_gemm");
  CHECK(answers.top_forward_backward.ms_per_pass == doctest::Approx(3000e-6));
  CHECK_FALSE(answers.same_top_kernel());

  const ProfileAnswers same = scenario_answers("ffn_gemm");
  CHECK(same.top_forward_backward.base_name == "ffn_gemm");
  CHECK(same.top_forward_backward.instances_per_pass == doctest::Approx(2));  // one forward, one backward
  CHECK(same.same_top_kernel());
}

TEST_CASE("(b) instances per forward count every launch of the kernel") {
  const std::vector<KernelTime> times = kernel_times(
      phase_kernels(captured_run(false), inference_root, {forward_scope}, gpuprof::Activities::kernels),
      timed_steps);
  bool found = false;
  for (const KernelTime& kernel : times) {
    if (kernel.base_name != "pv_gemm") continue;
    found = true;
    CHECK(kernel.instances == 2 * timed_steps);
    CHECK(kernel.instances_per_pass == doctest::Approx(2));
  }
  CHECK(found);
}

TEST_CASE("(c) non-GEMM kernels above 1% of forward kernel time, by time") {
  const ProfileAnswers answers = scenario_answers();
  REQUIRE(answers.non_gemm_forward.size() == 2);  // rmsnorm is 0.28%, the memset is not a kernel
  CHECK(answers.non_gemm_forward[0].base_name == "softmax_forward");
  CHECK(answers.non_gemm_forward[0].category == "softmax");
  CHECK(answers.non_gemm_forward[0].percent == doctest::Approx(100 * 200 / forward_kernels_ns));
  CHECK(answers.non_gemm_forward[1].base_name == "silu");
  CHECK(answers.non_gemm_forward[1].percent == doctest::Approx(100 * 50 / forward_kernels_ns));
}

TEST_CASE("(d) category shares: inference forward vs the whole train step") {
  const ProfileAnswers answers = scenario_answers();
  const CategoryRow& gemm = category(answers, "gemm");
  CHECK(gemm.inference_percent == doctest::Approx(100 * 1500 / forward_activities_ns));
  CHECK(gemm.train_percent == doctest::Approx(100 * 4500 / train_activities_ns));
  CHECK(gemm.inference_ms == doctest::Approx(1500e-6));
  CHECK(gemm.train_ms == doctest::Approx(4500e-6));
  CHECK(category(answers, "softmax").train_percent == doctest::Approx(100 * 600 / train_activities_ns));
  CHECK(category(answers, "elementwise").train_percent == doctest::Approx(100 * 550 / train_activities_ns));
  CHECK(category(answers, "memory").inference_percent == doctest::Approx(100 * 10 / forward_activities_ns));
  double inference_total = 0, train_total = 0;
  for (const CategoryRow& row : answers.categories) {
    inference_total += row.inference_percent;
    train_total += row.train_percent;
  }
  CHECK(inference_total == doctest::Approx(100));
  CHECK(train_total == doctest::Approx(100));
}

TEST_CASE("(e) softmax vs attention matmuls: time ratio next to FLOP ratio") {
  const ProfileAnswers answers = scenario_answers();
  const AttentionComparison& attention = answers.attention;
  CHECK(attention.scores.ms_per_forward == doctest::Approx(300e-6));
  CHECK(attention.softmax.ms_per_forward == doctest::Approx(200e-6));
  CHECK(attention.final_matmul.ms_per_forward == doctest::Approx(200e-6));
  CHECK(attention.final_matmul.kernels_per_forward == doctest::Approx(2));
  CHECK(attention.time_ratio() == doctest::Approx(200.0 / 500.0));
  CHECK(attention.flop_ratio() == doctest::Approx(1e8 / 8e9));
  CHECK(attention.scores.tflop_per_s() == doctest::Approx(4e9 / 300e-9 / 1e12));
}

TEST_CASE("a wrong root or a run without kernels is an error, not an empty answer") {
  const gpuprof::Report inference = captured_run(false), train = captured_run(true);
  CHECK_THROWS_AS(answer_questions(inference, "no such root", train, train_root, scenario_flops()),
                  std::runtime_error);
  gpuprof::Report uncaptured = inference;
  uncaptured.kernels.clear();
  CHECK_THROWS_AS(answer_questions(uncaptured, inference_root, train, train_root, scenario_flops()),
                  std::runtime_error);
}

TEST_CASE("one_step_report keeps the first timed step and the kernels it launched") {
  const gpuprof::Report train = captured_run(true);
  const gpuprof::Report step = one_step_report(train, train_root);
  CHECK(step.nodes.size() == train.nodes.size());
  // forward, attention, sdpa, its 3 children, ffn, rmsnorm, backward, optimizer step
  CHECK(step.instances.size() == 10);
  CHECK(step.kernels.size() == 8 + 2 + 1);
  for (const gpuprof::KernelRecord& kernel : step.kernels) CHECK(kernel.duration_ns() < 1000000);
  CHECK_THROWS_AS(one_step_report(train, "no such root"), std::runtime_error);
}
