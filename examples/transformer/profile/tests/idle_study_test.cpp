// profile/tests/idle_study_test.cpp: the idle study's arithmetic (steps from
// eager scope instances and from graph launches, the idle share) and its
// markdown and JSON, on synthetic reports.
#include <doctest/doctest.h>

#include <stdexcept>

#include "profile/idle_study.hpp"
#include "profile/tests/synthetic_run.hpp"
#include "support/json_parse.hpp"

using namespace transformer;
using namespace transformer::profile;
using transformer::profile::testing::SyntheticRun;

namespace {

constexpr std::int64_t gap = SyntheticRun::gap_ns;

// `steps` eager train steps after one warm-up step: forward 100 + 50 ns,
// backward 200 ns, optimizer step 30 ns of activities (a memset among them).
gpuprof::Report eager_run(int steps) {
  SyntheticRun run("run");
  const auto step = [&] {
    run.open("forward");
    run.kernel("gemm", "gemm", 100);
    run.open("attention");
    run.kernel("softmax", "softmax", 50);
    run.close();
    run.close();
    run.open("backward");
    run.kernel("gemm", "gemm", 200);
    run.close();
    run.open("optimizer step");
    run.kernel("memset", "memory", 10, gpuprof::ActivityKind::memset);
    run.kernel("adamw", "elementwise", 20);
    run.close();
  };
  run.open("warmup");
  step();
  run.close();
  for (int i = 0; i < steps; ++i) step();
  return run.report();
}

gpuprof::KernelRecord graph_record(int node, std::uint32_t launch, std::int64_t start, std::int64_t end) {
  gpuprof::KernelRecord record;
  record.scope_node = node;
  record.graph_launch = launch;
  record.graph_node_id = 1;
  record.start_ns = start;
  record.end_ns = end;
  return record;
}

}  // namespace

TEST_CASE(
    "eager steps: projection from forward's first start to the optimizer's last end, warm-up left out") {
  const std::vector<StepGpuTime> steps = step_gpu_times(eager_run(3), "run");
  REQUIRE(steps.size() == 3);
  for (const StepGpuTime& step : steps) {
    CHECK(step.busy_ns == 100 + 50 + 200 + 10 + 20);
    // Five activities, each gap_ns after the previous one: four gaps inside the step.
    CHECK(step.projection_ns == 380 + 4 * gap);
  }
  const std::optional<double> idle = idle_percent(steps);
  REQUIRE(idle);
  CHECK(*idle == doctest::Approx(100.0 * 4 * gap / (380 + 4 * gap)));
}

TEST_CASE("graph steps: one launch is one step, whatever the replay instances say") {
  gpuprof::Report report;
  gpuprof::ScopeNode root, forward, attention, backward;
  root.path = "run";
  forward.path = "run/forward";
  forward.parent = 0;
  attention.path = "run/forward/attention";
  attention.parent = 1;
  backward.path = "run/backward";
  backward.parent = 0;
  report.nodes = {root, forward, attention, backward};
  // The derived replay instances launch nothing themselves: not counted twice.
  gpuprof::ScopeInstance replay;
  replay.id = 99;
  replay.node = 1;
  replay.gpu_ms = 1;
  report.instances = {replay};
  for (const std::uint32_t launch : {7u, 8u}) {
    const std::int64_t at = launch * 1000;
    report.kernels.push_back(graph_record(1, launch, at, at + 100));
    report.kernels.push_back(graph_record(2, launch, at + 100, at + 150));  // nested: counts for forward
    report.kernels.push_back(graph_record(3, launch, at + 250, at + 450));  // 100 ns idle before it
  }
  const std::vector<StepGpuTime> steps = step_gpu_times(report, "run");
  REQUIRE(steps.size() == 2);
  for (const StepGpuTime& step : steps) {
    CHECK(step.projection_ns == 450);
    CHECK(step.busy_ns == 350);
  }
  CHECK(*idle_percent(steps) == doctest::Approx(100.0 * 100 / 450));

  // The optimizer's pieces beside backward on a second stream: the busy time
  // is the union of the intervals, never more than the projection.
  gpuprof::Report overlapped = report;
  gpuprof::ScopeNode optimizer;
  optimizer.path = "run/optimizer step";
  optimizer.parent = 0;
  overlapped.nodes.push_back(optimizer);
  for (const std::uint32_t launch : {7u, 8u})
    overlapped.kernels.push_back(graph_record(4, launch, launch * 1000 + 300, launch * 1000 + 500));
  for (const StepGpuTime& step : step_gpu_times(overlapped, "run")) {
    CHECK(step.projection_ns == 500);
    CHECK(step.busy_ns == 150 + 250);  // 250..500 covered once, though two kernels ran in 300..450
  }

  report.kernels.push_back(graph_record(3, 9, 9000, 9100));  // a backward with no forward
  CHECK_THROWS_AS(step_gpu_times(report, "run"), std::runtime_error);
  CHECK_THROWS_AS(step_gpu_times(report, "another run"), std::runtime_error);
  CHECK_FALSE(idle_percent({}));
}

TEST_CASE("idle study markdown and JSON: one row per configuration, failures said") {
  IdleStudyRow ok;
  ok.configuration = "small ctx 128 step bf16 fused attention";
  ok.eager = {7.5, 0.1, 10, "cuda_events"};
  ok.graph = {5.0, 0.05, 10, "cuda_events"};
  ok.eager_captured = {10.0, 0.1, 10, "cuda_events"};
  ok.graph_captured = {5.2, 0.05, 10, "cuda_events"};
  ok.eager_idle_percent = 62.5;
  ok.graph_idle_percent = 12.26;
  IdleStudyRow failed;
  failed.configuration = "small ctx 1024 step fp32 naive attention";
  failed.status = RunStatus::error;
  failed.note = "boom";
  const IdleStudy study{"Test GPU", "9.14.0", 4, 5, 10, {}, {ok, failed}};

  const std::string markdown = idle_study_markdown(study);
  CHECK(markdown.find("Device: Test GPU (cuDNN 9.14.0). Batch 4") != std::string::npos);
  CHECK(markdown.find(
            "| small ctx 128 step bf16 fused attention | 7.500 | 5.000 | 1.50 | 62.5 | 12.3 | 4.0 |") !=
        std::string::npos);
  CHECK(markdown.find("| small ctx 1024 step fp32 naive attention | - | - | - | - | - | - | error: boom |") !=
        std::string::npos);

  const gpuprof_test::Json json = gpuprof_test::parse_json(idle_study_json(study));
  CHECK(json["schema"].as_string() == "gpuprof.transformer_idle_study");
  CHECK(json["cudnn"].as_string() == "9.14.0");
  const gpuprof_test::Json& rows = json["rows"];
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["eager"]["mean_ms"].as_number() == 7.5);
  CHECK(rows[0]["graph_capture_on"]["mean_ms"].as_number() == 5.2);
  CHECK(rows[0]["graph_idle_percent"].as_number() == 12.26);
  CHECK(rows[1]["status"].as_string() == "error");
  CHECK(rows[1]["eager_idle_percent"].is_null());
}
