// bench() on the host clock (GPU timing turned off, so this runs the same on
// every machine): call counts, warm-up by count and by time, the noise-target
// cap, the cold call kept apart, and bad options refused.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <gpuprof/bench.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

namespace {
// Turns GPU timing off for one test and back on afterwards.
struct HostClockOnly {
  HostClockOnly() { gpuprof::profiler().set_gpu_timing(false); }
  ~HostClockOnly() { gpuprof::profiler().set_gpu_timing(true); }
};
void sleep_ms(int milliseconds) { std::this_thread::sleep_for(std::chrono::milliseconds(milliseconds)); }

const gpuprof::ScopeNode& node_at(const gpuprof::Report& report, const std::string& path) {
  for (const auto& node : report.nodes)
    if (node.path == path) return node;
  FAIL("no node " << path);
  throw;
}
}  // namespace

TEST_CASE("bench makes one cold call, the warm-up calls and the samples") {
  const HostClockOnly host_clock;
  int calls = 0;
  const auto result = gpuprof::bench([&] { ++calls; },
                                     [] {
                                       gpuprof::BenchOptions o;
                                       o.warmup = 3;
                                       o.iters = 7;
                                       return o;
                                     }());
  CHECK(calls == 1 + 3 + 7);
  CHECK(result.warmup_calls == 3);
  CHECK(result.host_ms.size() == 7);
  CHECK(result.gpu_ms.empty());
  CHECK(result.gpu.n == 0);
  CHECK(result.host.n == 7);
  CHECK(&result.primary() == &result.host);
  CHECK(result.timing_source == gpuprof::TimingSource::host_clock);
  CHECK(!result.timing_note.empty());
  CHECK(result.stop_reason == "7 iterations");
}

TEST_CASE("the cold call is timed and kept out of the samples") {
  const HostClockOnly host_clock;
  int calls = 0;
  const auto result = gpuprof::bench([&] { sleep_ms(calls++ == 0 ? 30 : 1); },
                                     [] {
                                       gpuprof::BenchOptions o;
                                       o.warmup = 0;
                                       o.iters = 5;
                                       return o;
                                     }());
  CHECK(result.cold_ms >= 30);
  CHECK(result.host.n == 5);
  CHECK(result.host.min >= 1);
  CHECK(result.host.min < 30);  // the cold call is not among the samples
}

TEST_CASE("warm-up by time keeps calling until warmup_ms has passed") {
  const HostClockOnly host_clock;
  std::vector<std::int64_t> call_times;
  const auto result = gpuprof::bench(
      [&] {
        call_times.push_back(gpuprof::host_now_ns());
        sleep_ms(1);
      },
      [] {
        gpuprof::BenchOptions o;
        o.warmup = 0;
        o.warmup_ms = 20;
        o.iters = 2;
        return o;
      }());
  REQUIRE(call_times.size() == 1 + static_cast<std::size_t>(result.warmup_calls) + 2);
  CHECK(result.warmup_calls >= 1);
  // The first sample starts only after the warm-up has lasted warmup_ms.
  const std::int64_t warmup_start = call_times[1], first_sample = call_times[call_times.size() - 2];
  CHECK(gpuprof::ns_to_ms(first_sample - warmup_start) >= 20);
}

TEST_CASE("an unreachable noise target stops at max_iters and says so") {
  const HostClockOnly host_clock;
  int calls = 0;
  const auto result = gpuprof::bench([&] { sleep_ms(calls++ % 2 == 0 ? 1 : 3); },
                                     [] {
                                       gpuprof::BenchOptions o;
                                       o.warmup = 0;
                                       o.target_rel_noise = 1e-9;
                                       o.max_iters = 12;
                                       return o;
                                     }());
  CHECK(result.host.n == 12);
  CHECK(result.stop_reason.find("max_iters cap 12") != std::string::npos);
}

TEST_CASE("stop_reason: noise target, minimum samples, budget") {
  gpuprof::BenchOptions options;
  options.target_rel_noise = 0.01;
  options.min_iters = 5;
  const std::vector<double> steady{1.0, 1.001, 0.999, 1.0, 1.0};
  CHECK(!gpuprof::detail::stop_reason(options, {1.0, 1.0, 1.0, 1.0}, 0).has_value());  // 4 < min
  const auto met = gpuprof::detail::stop_reason(options, steady, 0);
  REQUIRE(met.has_value());
  CHECK(met->find("noise target met") == 0);
  CHECK(!gpuprof::detail::stop_reason(options, {1, 2, 1, 2, 1}, 0).has_value());  // cv ~ 30 %

  gpuprof::BenchOptions budget;
  budget.iters = 1000;
  budget.budget_ms = 50;
  CHECK(!gpuprof::detail::stop_reason(budget, {1, 1}, 49.9).has_value());
  const auto spent = gpuprof::detail::stop_reason(budget, {1, 1, 1}, 50);
  REQUIRE(spent.has_value());
  CHECK(spent->find("time budget of 50 ms spent after 3") == 0);
}

TEST_CASE("a time budget ends sampling early") {
  const HostClockOnly host_clock;
  const auto result = gpuprof::bench([] { sleep_ms(2); },
                                     [] {
                                       gpuprof::BenchOptions o;
                                       o.warmup = 0;
                                       o.iters = 1000;
                                       o.budget_ms = 20;
                                       return o;
                                     }());
  CHECK(result.host.n >= 1);
  CHECK(result.host.n <= 11);  // at least 2 ms each: the budget allows about 10
  CHECK(result.stop_reason.find("time budget") == 0);
}

TEST_CASE("summary() is one line with the statistics") {
  const HostClockOnly host_clock;
  const auto result = gpuprof::bench([] {},
                                     [] {
                                       gpuprof::BenchOptions o;
                                       o.warmup = 1;
                                       o.iters = 6;
                                       return o;
                                     }());
  const std::string line = result.summary();
  CHECK(line.find('\n') == std::string::npos);
  for (const char* part : {"host ", " ms ", "median", "p10", "p90", "min", "max", "cv", "n=6", "cold"})
    CHECK_MESSAGE(line.find(part) != std::string::npos, part);
}

TEST_CASE("bad options are refused with a clear message") {
  const auto refuses = [](gpuprof::BenchOptions options, const std::string& what) {
    try {
      gpuprof::bench([] {}, options);
      FAIL("accepted " << what);
    } catch (const gpuprof::Error& error) {
      CHECK_MESSAGE(std::string(error.what()).find(what) != std::string::npos, error.what());
    }
  };
  refuses(
      [] {
        gpuprof::BenchOptions o;
        o.iters = 0;
        return o;
      }(),
      "iters must be >= 1");
  refuses(
      [] {
        gpuprof::BenchOptions o;
        o.warmup = -1;
        return o;
      }(),
      "warmup must be >= 0");
  refuses(
      [] {
        gpuprof::BenchOptions o;
        o.min_iters = 1;
        return o;
      }(),
      "min_iters must be >= 2");
  refuses(
      [] {
        gpuprof::BenchOptions o;
        o.min_iters = 10;
        o.max_iters = 5;
        return o;
      }(),
      "max_iters must be >= min_iters");
}

TEST_CASE("scopes in bench's cold call and warm-up are left out of the report: its count is iters") {
  const HostClockOnly host_clock;
  gpuprof::Profiler& profiler = gpuprof::profiler();
  profiler.reset();
  gpuprof::BenchOptions options;
  options.warmup = 5;
  options.iters = 20;
  int calls = 0;
  const auto body = [&calls] {
    GPUPROF_SCOPE("bench body");
    // A scope on a thread that fn starts is left out in the warm-up as well:
    // a helper thread in the cold call (call 0) and in every sixth call.
    if (calls++ % 6 == 0) std::thread([] { GPUPROF_SCOPE("helper"); }).join();
  };
  {
    GPUPROF_SCOPE("around bench");
    const auto result = gpuprof::bench(body, options);
    CHECK(result.host.n == 20);
  }
  gpuprof::Report report = profiler.report();
  CHECK(node_at(report, "around bench").count == 1);
  CHECK(node_at(report, "around bench/bench body").count == 20);
  CHECK(node_at(report, "helper").count == 4);  // calls 6, 12, 18, 24: samples
  CHECK(report.warmup_instances_left_out == 1 + 5 + 1);
  // Scopes after bench() are counted again.
  { GPUPROF_SCOPE("bench body"); }
  CHECK(node_at(profiler.report(), "bench body").count == 1);

  profiler.reset();
  options.keep_warmup_scopes = true;
  calls = 1;
  gpuprof::bench(body, options);
  report = profiler.report();
  CHECK(node_at(report, "bench body").count == 1 + 5 + 20);
  CHECK(report.warmup_instances_left_out == 0);
}

TEST_CASE("warm-up by count and by time: both are met, and slow warm-up calls stay out of the samples") {
  const HostClockOnly host_clock;
  gpuprof::profiler().reset();
  // Far above the 1 ms calls: a loaded CI machine can stretch a 1 ms sleep by
  // several milliseconds, not by tens.
  constexpr int slow_ms = 40;
  int calls = 0;
  std::vector<std::int64_t> call_times;
  gpuprof::BenchOptions options;
  options.warmup = 3;      // the count is met first (3 calls of >= 1 ms) ...
  options.warmup_ms = 40;  // ... then the time: more calls until 40 ms have passed
  options.iters = 10;
  const auto result = gpuprof::bench(
      [&] {
        GPUPROF_SCOPE("slow start");
        call_times.push_back(gpuprof::host_now_ns());
        sleep_ms(calls++ < 4 ? slow_ms : 1);  // the cold call and 3 warm-up calls are slow
      },
      options);
  CHECK(result.warmup_calls >= 3);
  REQUIRE(call_times.size() == 1 + static_cast<std::size_t>(result.warmup_calls) + 10);
  const std::int64_t warmup_start = call_times[1], first_sample = call_times[call_times.size() - 10];
  CHECK(gpuprof::ns_to_ms(first_sample - warmup_start) >= 40);
  CHECK(result.cold_ms >= slow_ms);
  CHECK(result.host.n == 10);
  CHECK(result.host.max < slow_ms);  // no slow call among the samples
  const gpuprof::Report report = gpuprof::profiler().report();
  const gpuprof::ScopeNode& node = node_at(report, "slow start");
  CHECK(node.count == 10);
  CHECK(node.host_ms.max < slow_ms);
  CHECK(report.warmup_instances_left_out == 1 + static_cast<std::uint64_t>(result.warmup_calls));

  // A warm-up time shorter than the counted calls adds none.
  calls = 0;
  call_times.clear();
  options.warmup_ms = 1;
  CHECK(gpuprof::bench([&] { sleep_ms(calls++ < 4 ? slow_ms : 1); }, options).warmup_calls == 3);
}
