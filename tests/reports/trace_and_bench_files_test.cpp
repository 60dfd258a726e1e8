// Files other tools read: the Chrome trace in Kineto's conventions (for
// Holistic Trace Analysis), and bench() results as gpuprof.bench JSON and as
// Google Benchmark JSON.
#include <gpuprof/compare.hpp>
#include <gpuprof/report/read_bench_json.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/bench_json.hpp>
#include <gpuprof/report/gbench_json.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "support/json_parse.hpp"
#include "support/synthetic_report.hpp"
#include "support/temporary_directory.hpp"

using doctest::Approx;
using gpuprof_test::Json;

TEST_CASE(
    "Chrome trace in Kineto's conventions: kernel events, deviceProperties, ProfilerStep#N, memory "
    "counters") {
  gpuprof::Report report = gpuprof_test::synthetic_training_report();
  report.environment.compute_capability = "9.0";
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::ChromeTraceOptions options;
  options.step_scope = "step";
  gpuprof::write_chrome_trace(report, dir.file("trace.json"), options);
  const Json trace = gpuprof_test::parse_json_file(dir.file("trace.json"));

  CHECK(trace["schemaVersion"].as_int64() == 1);
  REQUIRE(trace["deviceProperties"].size() == 1);
  CHECK(trace["deviceProperties"][0]["id"].as_int64() == 0);
  CHECK(trace["deviceProperties"][0]["name"].as_string() == "Synthetic GPU");
  CHECK(trace["deviceProperties"][0]["computeMajor"].as_int64() == 9);
  CHECK(trace["otherData"]["environment"]["host_name"].as_string() == "test-host");

  std::size_t kernels = 0, counters = 0;
  std::vector<std::string> steps;
  for (const Json& event : trace["traceEvents"].elements()) {
    const std::string phase = event["ph"].as_string();
    if (phase == "X" && event["cat"].as_string() == "kernel") {
      ++kernels;
      const Json& args = event["args"];
      CHECK(args["stream"].as_int64() == 7);
      CHECK(args["device"].as_int64() == 0);
      CHECK(args["correlation"].as_int64() > 0);
      CHECK(args["External id"].as_int64() > 0);
      CHECK(event["pid"].as_int64() == 1000);
      CHECK(event["tid"].as_int64() == 7);
    }
    if (phase == "X" && event["name"].as_string().rfind("ProfilerStep#", 0) == 0) {
      CHECK(event["cat"].as_string() == "user_annotation");
      CHECK(event["args"]["path"].as_string() == "step");
      steps.push_back(event["name"].as_string());
    }
    if (phase == "C") {
      ++counters;
      CHECK(event["args"]["MiB"].as_number() >= 0);
      CHECK(event["ts"].as_number() >= 0);
    }
  }
  CHECK(kernels == report.kernels.size());
  CHECK(steps == std::vector<std::string>{"ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"});
  // One counter per in-use sample, one per allocation and per release seen.
  std::size_t changes = 0;
  for (const auto& allocation : report.memory_timeline.allocations)
    changes += allocation.free_ns >= 0 ? 2 : 1;
  CHECK(counters == report.memory_timeline.in_use.size() + changes);
}

namespace {
gpuprof::BenchResult synthetic_bench(double gpu_base) {
  gpuprof::BenchResult result;
  result.timing_source = gpuprof::TimingSource::cuda_events;
  for (int i = 0; i < 8; ++i) {
    result.gpu_ms.push_back(gpu_base + 0.01 * i);
    result.host_ms.push_back(gpu_base + 0.05 + 0.01 * i);
  }
  result.gpu = gpuprof::summarize(result.gpu_ms);
  result.host = gpuprof::summarize(result.host_ms);
  result.cold_ms = 9;
  result.stop_reason = "8 iterations";
  result.clocks = std::vector<gpuprof::ClockSample>(8, gpuprof::ClockSample{1980, 2619, 0});
  result.clocks[3].throttle_reasons = gpuprof::throttle_reason::sw_power_cap;
  result.throttled_samples = 1;
  return result;
}
}  // namespace

TEST_CASE(
    "bench results as Google Benchmark JSON: samples as repetitions, aggregates, environment as context") {
  gpuprof::Environment env;
  env.gpu_name = "Synthetic GPU";
  env.host_name = "test-host";
  env.build_type = "Release";
  env.time_utc = "2026-01-01T00:00:00Z";
  const gpuprof::BenchResult result = synthetic_bench(1.0);
  gpuprof_test::TemporaryDirectory dir;
  gpuprof::write_gbench_json({{"train_step", result}}, dir.file("gbench.json"), {env});
  const Json doc = gpuprof_test::parse_json_file(dir.file("gbench.json"));
  CHECK(doc["context"]["host_name"].as_string() == "test-host");
  CHECK(doc["context"]["gpu_name"].as_string() == "Synthetic GPU");
  CHECK(doc["context"]["library_build_type"].as_string() == "release");
  const Json& benchmarks = doc["benchmarks"];
  REQUIRE(benchmarks.size() == 8 + 4);
  for (std::size_t i = 0; i < 8; ++i) {
    const Json& row = benchmarks[i];
    CHECK(row["name"].as_string() == "train_step");
    CHECK(row["run_type"].as_string() == "iteration");
    CHECK(row["repetitions"].as_int64() == 8);
    CHECK(row["repetition_index"].as_int64() == static_cast<std::int64_t>(i));
    CHECK(row["iterations"].as_int64() == 1);
    CHECK(row["real_time"].as_number() == result.gpu_ms[i]);
    CHECK(row["cpu_time"].as_number() == result.host_ms[i]);
    CHECK(row["time_unit"].as_string() == "ms");
  }
  const auto aggregate = [&](std::size_t at, const char* name) -> const Json& {
    const Json& row = benchmarks[at];
    CHECK(row["run_type"].as_string() == "aggregate");
    CHECK(row["aggregate_name"].as_string() == name);
    CHECK(row["name"].as_string() == std::string("train_step_") + name);
    CHECK(row["run_name"].as_string() == "train_step");
    return row;
  };
  CHECK(aggregate(8, "mean")["real_time"].as_number() == Approx(result.gpu.mean));
  CHECK(aggregate(9, "median")["cpu_time"].as_number() == Approx(result.host.median));
  CHECK(aggregate(10, "stddev")["real_time"].as_number() == Approx(result.gpu.stddev));
  const Json& cv = aggregate(11, "cv");
  CHECK(cv["aggregate_unit"].as_string() == "percentage");
  CHECK(cv["real_time"].as_number() == Approx(result.gpu.cv));
}

TEST_CASE("bench results as gpuprof.bench JSON, which gpuprof-compare reads") {
  gpuprof::Environment env;
  env.gpu_name = "Synthetic GPU";
  const std::string base = gpuprof::to_bench_json({{"train_step", synthetic_bench(1.0)}}, {env});
  const std::string next = gpuprof::to_bench_json({{"train_step", synthetic_bench(1.5)}}, {env});
  const Json doc = gpuprof_test::parse_json(base);
  CHECK(doc["schema"].as_string() == "gpuprof.bench");
  const Json& run = doc["benchmarks"][0];
  CHECK(run["gpu_ms"]["samples_ms"].size() == 8);
  CHECK(run["throttled_samples"].as_int64() == 1);
  CHECK(run["throttled"][3].as_bool());
  CHECK(run["sm_clock_mhz"][0].as_int64() == 1980);
  const gpuprof::Comparison c =
      gpuprof::compare_runs(gpuprof::detail::measured_run_from_json(doc),
                            gpuprof::detail::measured_run_from_json(gpuprof_test::parse_json(next)));
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].key == "train_step");
  CHECK(c.rows[0].verdict == gpuprof::Verdict::slower);
}

TEST_CASE("gpuprof.bench keeps each benchmark's own fields; one that did not run compares as not measured") {
  gpuprof::NamedBenchResult step{"step/small/ctx512/bf16", synthetic_bench(1.0)};
  step.fields = {{"tokens_per_s", 2.5e5},
                 {"peak_mem_bytes", std::int64_t{6442450944}},
                 {"precision", std::string("bf16")},
                 {"graph", true},
                 {"torch_median_ms", nullptr},
                 {"losses", std::vector<double>{9.25, 8.5}}};
  gpuprof::NamedBenchResult oom{"step/2.7B/ctx512/fp32", {}};
  oom.result.stop_reason = "OOM (needs 40.0 GiB, 12.5 GiB free)";
  const Json doc = gpuprof_test::parse_json(gpuprof::to_bench_json({step, oom}, {}));
  const Json& fields = doc["benchmarks"][0]["fields"];
  REQUIRE(fields.size() == 6);
  CHECK(fields["tokens_per_s"].as_number() == 2.5e5);
  CHECK(fields["peak_mem_bytes"].as_int64() == 6442450944);
  CHECK(fields["precision"].as_string() == "bf16");
  CHECK(fields["graph"].as_bool());
  CHECK(fields["torch_median_ms"].is_null());
  CHECK(fields["losses"][1].as_number() == 8.5);
  CHECK(doc["benchmarks"][1]["fields"].size() == 0);

  const gpuprof::MeasuredRun run = gpuprof::detail::measured_run_from_json(doc);
  const gpuprof::Comparison c = gpuprof::compare_runs(run, run);
  REQUIRE(c.rows.size() == 2);
  CHECK(c.rows[0].verdict == gpuprof::Verdict::same);
  CHECK(c.rows[1].key == "step/2.7B/ctx512/fp32");
  CHECK(c.rows[1].verdict == gpuprof::Verdict::not_measured);
  CHECK(c.rows[1].note == "base: OOM (needs 40.0 GiB, 12.5 GiB free)");
}

TEST_CASE("bench summary line names throttled samples") {
  const std::string line = synthetic_bench(1.0).summary();
  CHECK(line.find("THROTTLED: 1 of 8 samples (sw_power_cap)") != std::string::npos);
}
