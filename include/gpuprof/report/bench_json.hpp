// gpuprof/report/bench_json.hpp: bench() results as a file, in gpuprof's own
// JSON (schema "gpuprof.bench", which gpuprof-compare reads).
//
//   std::vector<gpuprof::NamedBenchResult> runs = {{"train_step", result}};
//   gpuprof::write_bench_json("bench.json", runs);
//
// For CI dashboards that read Google Benchmark's format, see gbench_json.hpp.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "../atomic_file.hpp"
#include "../bench.hpp"
#include "../environment.hpp"
#include "../json_writer.hpp"
#include "environment_json.hpp"
#include "json.hpp"

GPUPROF_NAMESPACE_BEGIN

struct NamedBenchResult {
  std::string name;  // e.g. "train_step/small/ctx128"
  BenchResult result;
};

constexpr int bench_json_version = 1;

// {"schema": "gpuprof.bench", "version": 1, "environment": {...}, "benchmarks": [...]}:
// each benchmark with its timing source, both summaries (samples included),
// cold call, warm-up count, stop reason, clocks and throttled samples.
inline std::string bench_json(const std::vector<NamedBenchResult>& runs,
                              const Environment& environment = capture_environment()) {
  JsonWriter json;
  json.begin_object().member("schema", "gpuprof.bench").member("version", bench_json_version).key("environment");
  write_environment_json(json, environment);
  json.key("benchmarks").begin_array();
  for (const NamedBenchResult& run : runs) {
    const BenchResult& r = run.result;
    json.begin_object()
        .member("name", run.name)
        .member("timing_source", timing_source_name(r.timing_source))
        .member("timing_note", r.timing_note)
        .member("cold_ms", r.cold_ms)
        .member("warmup_calls", r.warmup_calls)
        .member("stop_reason", r.stop_reason);
    json.key("gpu_ms");
    if (r.timing_source == TimingSource::cuda_events) write_summary_json(json, r.gpu);
    else json.value(nullptr);
    json.key("host_ms");
    write_summary_json(json, r.host);
    json.member("throttled_samples", r.throttled_samples).member("clocks_note", r.clocks_note);
    json.key("sm_clock_mhz").begin_array(JsonWriter::one_line);
    for (const ClockSample& clock : r.clocks) json.value(clock.sm_mhz);
    json.end_array().key("throttled").begin_array(JsonWriter::one_line);
    for (const ClockSample& clock : r.clocks) json.value(clock.throttled());
    json.end_array().end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

inline void write_bench_json(const std::vector<NamedBenchResult>& runs, const std::string& path,
                             const Environment& environment = capture_environment()) {
  write_file_atomically(path, bench_json(runs, environment));
}

GPUPROF_NAMESPACE_END
