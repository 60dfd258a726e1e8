// Incremental reports and the trace window: reports fold what finished since
// the last one, and the result equals one report over everything; the trace
// keeps the newest instances and says how many it left out.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gpuprof/clock.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

namespace {
void layer() {
  GPUPROF_SCOPE("layer");
  { GPUPROF_SCOPE("attention"); }
  { GPUPROF_SCOPE("mlp"); }
}
void step() {
  GPUPROF_SCOPE("step");
  for (int i = 0; i < 3; ++i) layer();
}
// Restores the default trace window whatever a test does.
struct WindowGuard {
  ~WindowGuard() { gpuprof::profiler().set_trace_window(gpuprof::detail::default_trace_window); }
};
}  // namespace

TEST_CASE("reports taken along the way fold into the figures of one report over everything") {
  auto& profiler = gpuprof::profiler();
  const WindowGuard restore;
  profiler.set_trace_window(0);  // full trace: every instance to recompute from
  profiler.reset();
  std::thread other([] {
    for (int i = 0; i < 50; ++i) step();
  });
  for (int i = 0; i < 200; ++i) {
    step();
    if (i % 17 == 0) (void)profiler.report();
  }
  other.join();
  const gpuprof::Report report = profiler.report();
  REQUIRE(report.instances.size() == 250 * 10);
  CHECK(report.recorded_instances == 250 * 10);
  CHECK(report.trace_note().empty());
  std::map<int, std::vector<double>> durations;
  for (const gpuprof::ScopeInstance& instance : report.instances)
    durations[instance.node].push_back(gpuprof::ns_to_ms(instance.host_end_ns - instance.host_begin_ns));
  for (std::size_t n = 0; n < report.nodes.size(); ++n) {
    const gpuprof::Summary from_scratch = gpuprof::summarize(durations[static_cast<int>(n)]);
    const gpuprof::Summary& folded = report.nodes[n].host_ms;
    CAPTURE(report.nodes[n].path);
    CHECK(folded.exact());
    CHECK(report.nodes[n].count == from_scratch.n);
    CHECK(folded.mean == from_scratch.mean);
    CHECK(folded.stddev == from_scratch.stddev);
    CHECK(folded.median == from_scratch.median);
    CHECK(folded.sorted == from_scratch.sorted);
  }
  // Folded records were handed back: another report reads nothing new.
  const gpuprof::Report again = profiler.report();
  CHECK(again.recorded_instances == report.recorded_instances);
  CHECK(again.nodes.at(0).host_ms.mean == report.nodes.at(0).host_ms.mean);
}

TEST_CASE("the trace keeps the newest instances and says how many it left out") {
  auto& profiler = gpuprof::profiler();
  const WindowGuard restore;
  profiler.reset();
  profiler.set_trace_window(25);
  for (int i = 0; i < 10; ++i) step();
  (void)profiler.report();
  for (int i = 0; i < 10; ++i) step();
  const gpuprof::Report report = profiler.report();
  CHECK(report.recorded_instances == 200);
  REQUIRE(report.instances.size() == 25);
  CHECK(report.trace_note() == "trace: last 25 of 200 instances");
  // The newest: the last step's 10 instances are all there.
  std::uint64_t steps = 0;
  for (const gpuprof::ScopeInstance& instance : report.instances)
    if (report.nodes.at(static_cast<std::size_t>(instance.node)).path == "step") ++steps;
  CHECK(steps >= 2);
  CHECK(report.nodes.at(0).count == 20);  // statistics cover every instance
  CHECK(report.nodes.at(0).host_ms.n == 20);
  profiler.reset();
  CHECK(profiler.report().recorded_instances == 0);
}

TEST_CASE("a thread whose log grows long folds it itself, while another thread reports or not") {
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  (void)profiler.report();
  constexpr int steps = 14000;  // 140,000 instances: several times past the 15,360 records a log folds at
  for (int i = 0; i < steps; ++i) step();
  // No report yet, and the log holds only what finished since it folded itself.
  CHECK(gpuprof::detail::recorder().this_thread().records.size() <= 15'360);
  const gpuprof::Report alone = profiler.report();
  CHECK(alone.recorded_instances == std::uint64_t{steps} * 10);
  CHECK(alone.nodes.at(0).host_ms.n == steps);

  profiler.reset();
  std::atomic<bool> done{false};
  std::thread worker([&] {
    for (int i = 0; i < 3 * steps; ++i) step();
    done = true;
  });
  int reports = 0;
  while (!done) {  // sparse reports: the worker's log fills and folds between them
    CHECK(profiler.report().recorded_instances <= std::uint64_t{3 * steps} * 10);
    ++reports;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  worker.join();
  const gpuprof::Report report = profiler.report();
  CHECK(reports > 0);
  CHECK(report.recorded_instances == std::uint64_t{3 * steps} * 10);
  CHECK(report.nodes.at(0).count == 3 * steps);
  CHECK(report.instances.size() == gpuprof::detail::default_trace_window);
}
