// time_steps(): how --warmup and --steps map onto gpuprof::bench(), checked
// on a backend that only logs what it is asked to do (no device, no model).
// The log shows which steps ran eagerly, when the CUDA graph was captured
// and which steps replayed it; the report shows which scopes were counted.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <gpuprof/profiler.hpp>

#include "harness/run.hpp"

using namespace transformer;
using namespace transformer::harness;

namespace {

// "F", "B", "O" for forward, backward, optimizer step; inside a capture they
// are bracketed ("[F]"), and "R" is a replay of the captured graph.
class LoggingBackend final : public Backend {
 public:
  std::string log;

  std::string name() const override { return "logging"; }
  const RunConfig& config() const override { return config_; }
  std::vector<float> parameters() override { return {}; }
  void set_parameters(const std::vector<float>&) override {}
  void set_batch(const std::vector<std::int32_t>&, const std::vector<std::int32_t>&) override {}
  void forward() override { note("F"); }
  void backward() override { note("B"); }
  void optimizer_step() override { note("O"); }
  void replay_graph() override {
    REQUIRE(captured_);
    note("R");
  }
  bool has_graph() const override { return captured_; }
  void synchronize() override {}
  float loss() override { return 0; }
  std::vector<float> logits() override { return {}; }
  std::vector<float> gradients() override { return {}; }
  std::size_t allocated_bytes() const override { return 0; }

 protected:
  void capture(const std::function<void()>& enqueue) override {
    capturing_ = true;
    enqueue();
    capturing_ = false;
    captured_ = true;
  }

 private:
  void note(const char* what) {
    if (!log.empty()) log += ' ';
    log += capturing_ ? std::string("[") + what + "]" : what;
  }
  RunConfig config_;
  bool capturing_ = false;
  bool captured_ = false;
};

struct Outcome {
  std::string log;
  StepTiming timing;
  std::map<std::string, std::uint64_t> counts;  // by scope path
};

Outcome run_protocol(int warmup, int steps, bool graph, Mode mode = Mode::fwd) {
  gpuprof::profiler().reset();
  LoggingBackend backend;
  StepProtocol protocol;
  protocol.warmup = warmup;
  protocol.steps = steps;
  protocol.graph = graph;
  Outcome outcome;
  outcome.timing = time_steps(backend, mode, protocol, "config");
  outcome.log = backend.log;
  for (const auto& node : gpuprof::profiler().report().nodes) outcome.counts[node.path] = node.count;
  return outcome;
}

std::uint64_t count_of(const Outcome& outcome, const std::string& path) {
  const auto found = outcome.counts.find(path);
  return found == outcome.counts.end() ? 0 : found->second;
}

}  // namespace

TEST_CASE("eager steps: w warm-up steps in their own scope, then n timed steps, whatever w") {
  for (const int warmup : {0, 1, 2}) {
    CAPTURE(warmup);
    const Outcome outcome = run_protocol(warmup, 3, false);
    std::string expected;
    for (int i = 0; i < warmup + 3; ++i) expected += i == 0 ? "F" : " F";
    CHECK(outcome.log == expected);
    CHECK(outcome.timing.samples_ms.size() == 3);
    CHECK(count_of(outcome, "config") == 1);
    CHECK(count_of(outcome, "config/warmup") == static_cast<std::uint64_t>(warmup));
    CHECK(count_of(outcome, "config/warmup/forward") == static_cast<std::uint64_t>(warmup));
    // The timed steps' scopes: with no warm-up the cold step is the first of
    // them, and the report counts it like the samples do.
    CHECK(count_of(outcome, "config/forward") == 3);
  }
}

TEST_CASE("with no warm-up the cold step is the first sample") {
  const Outcome outcome = run_protocol(0, 4, false);
  REQUIRE(outcome.timing.samples_ms.size() == 4);
  CHECK(outcome.timing.samples_ms.front() == outcome.timing.cold_ms);
  CHECK(run_protocol(0, 1, false).timing.samples_ms.size() == 1);
}

TEST_CASE("graph steps: captured at the end of the last warm-up step, every timed step a replay") {
  // w = 0: captured before any step runs; the cold step is the first replay.
  CHECK(run_protocol(0, 3, true).log == "[F] R R R");
  // w = 1: the cold call is the one warm-up step; the capture follows it.
  CHECK(run_protocol(1, 3, true).log == "F [F] R R R");
  // w = 2: two eager warm-up steps, the capture after the second.
  const Outcome two = run_protocol(2, 3, true);
  CHECK(two.log == "F F [F] R R R");
  CHECK(two.timing.samples_ms.size() == 3);
  CHECK(count_of(two, "config/warmup") == 2);
  // The whole step is what is captured and replayed.
  CHECK(run_protocol(1, 2, true, Mode::step).log == "F B O [F] [B] [O] R R");
}
