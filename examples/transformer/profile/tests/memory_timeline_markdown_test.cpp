// profile/tests/memory_timeline_markdown_test.cpp: --memory-timeline's file
// names, phases and markdown on a synthetic run.
#include <doctest/doctest.h>

#include <string>

#include "profile/memory_timeline_results.hpp"
#include "profile/questions.hpp"
#include "support/synthetic_report.hpp"

using namespace transformer;
using namespace transformer::profile;

using gpuprof_test::timeline_allocation;

namespace {

constexpr std::int64_t mib = 1 << 20;

// Built at 1 ms (parameters 6 GiB, activations 2 GiB), freed at 900 ms; a
// small buffer no scope made, never freed.
MemoryTimelineRun synthetic_run() {
  MemoryTimelineRun run;
  run.label = "2.7B ctx 128 bf16 fused";
  run.slug = "2.7B-ctx128-bf16-fused";
  run.mode = Mode::step;
  run.allocated_bytes = 8192 * mib;
  run.timeline.allocations = {
      timeline_allocation(6144 * mib, 1'000'000, 900'000'000, "build backend/allocate parameters (fp32)"),
      timeline_allocation(2048 * mib, 2'000'000, 901'000'000, "build backend/allocate activations"),
      timeline_allocation(mib / 2, 3'000'000, -1, "")};
  run.timeline.in_use = {{0, 600 * mib}, {500'000'000, 8800 * mib}};
  run.spans = {{"build backend", 500'000, 10'000'000}, {"forward", 100'000'000, 200'000'000}};
  return run;
}

}  // namespace

TEST_CASE("memory timeline: file names carry the configuration and the mode") {
  MemoryTimelineRun run = synthetic_run();
  CHECK(memory_timeline_file(run, "svg") == "memory-timeline-2.7B-ctx128-bf16-fused-step.svg");
  run.mode = Mode::fwd;
  CHECK(memory_timeline_file(run, "html") == "memory-timeline-2.7B-ctx128-bf16-fused-fwd.html");
  CHECK(memory_timeline_title(run) == "2.7B ctx 128 bf16 fused, forward only");
}

TEST_CASE("memory timeline: the phases are the backend's construction and the step phases") {
  gpuprof::Report report;
  for (const char* name : {"build backend", "allocate parameters (fp32)", forward_scope, "attention",
                           backward_scope, optimizer_scope}) {
    gpuprof::ScopeNode node;
    node.name = name;
    node.path = name;
    report.nodes.push_back(node);
  }
  for (int i = 0; i < 6; ++i) {
    gpuprof::ScopeInstance instance;
    instance.id = static_cast<std::uint64_t>(i + 1);
    instance.node = i;
    instance.host_begin_ns = 10 * i;
    instance.host_end_ns = 10 * i + 5;
    report.instances.push_back(instance);
  }
  const auto spans = memory_timeline_phases(report);
  REQUIRE(spans.size() == 4);
  CHECK(spans[0].label == "build backend");
  CHECK(spans[1].label == "forward");
  CHECK(spans[2].label == "backward");
  CHECK(spans[3].label == "optimizer step");
}

TEST_CASE("memory timeline: the markdown shows each picture and its largest allocations with their scopes") {
  MemoryTimelineResults results;
  results.device = "NVIDIA H100";
  results.batch = 4;
  results.warmup = 1;
  results.steps = 1;
  results.notes = {"2.7B ctx 128 fp32 fused left out: fused attention is bf16 only"};
  results.runs.push_back(synthetic_run());
  MemoryTimelineRun oom = synthetic_run();
  oom.slug = "2.7B-ctx512-bf16-fused";
  oom.label = "2.7B ctx 512 bf16 fused";
  oom.status = RunStatus::oom;
  oom.bytes_needed = 90 * 1024 * mib;
  results.runs.push_back(oom);
  const std::string md = memory_timeline_markdown(results);
  CHECK(md.find("Device: NVIDIA H100. Batch 4, 1 warm-up and 1 timed step(s)") != std::string::npos);
  CHECK(md.find("- Note: 2.7B ctx 128 fp32 fused left out") != std::string::npos);
  CHECK(md.find("## 2.7B ctx 128 bf16 fused, train step") != std::string::npos);
  CHECK(md.find("![2.7B ctx 128 bf16 fused, train step](memory-timeline-2.7B-ctx128-bf16-fused-step.svg)") !=
        std::string::npos);
  CHECK(md.find("3 allocations captured, 8.00 GiB live at most; the backend's arena: 8.00 GiB, allocated in "
                "`build backend/allocate …` scopes: 8.00 GiB.") != std::string::npos);
  CHECK(md.find("Device memory in use at scope boundaries: 600.00 MiB to 8.59 GiB.") != std::string::npos);
  // Largest first; times from the picture's origin (the first sample, at 0).
  const std::size_t parameters =
      md.find("| 1 | 6.00 GiB | build backend/allocate parameters (fp32) | 1.0 | 900.0 | 899.0 |");
  const std::size_t activations =
      md.find("| 2 | 2.00 GiB | build backend/allocate activations | 2.0 | 901.0 | 899.0 |");
  const std::size_t unscoped = md.find("| 3 | 0.50 MiB | (no scope) | 3.0 | live at the end | - |");
  CHECK(parameters != std::string::npos);
  CHECK(activations != std::string::npos);
  CHECK(unscoped != std::string::npos);
  CHECK(parameters < activations);
  CHECK(activations < unscoped);
  CHECK(md.find("## 2.7B ctx 512 bf16 fused, train step\n\nOut of memory: the backend needs 90.00 GiB.") !=
        std::string::npos);
}
