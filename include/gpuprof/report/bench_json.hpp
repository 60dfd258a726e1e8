// gpuprof/report/bench_json.hpp: bench() results as a file, in gpuprof's own
// JSON (schema "gpuprof.bench", which gpuprof-compare reads).
//
// ```cpp
// #include <gpuprof/report/bench_json.hpp>
// void save(const gpuprof::BenchResult& result) {
//   std::vector<gpuprof::NamedBenchResult> runs = {{"train_step", result}};
//   runs[0].fields = {{"tokens_per_s", 2.1e5}, {"precision", std::string("bf16")}};
//   gpuprof::write_bench_json(runs, "bench.json", {gpuprof::capture_environment()});
// }
// ```
//
// For CI dashboards that read Google Benchmark's format, see gbench_json.hpp;
// the reader of these files is read_bench_json.hpp.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../atomic_file.hpp"
#include "../axes.hpp"
#include "../bench.hpp"
#include "../environment.hpp"
#include "../json_writer.hpp"
#include "environment_json.hpp"
#include "json.hpp"
#include "schema_versions.hpp"

GPUPROF_NAMESPACE_BEGIN

// A benchmark's own figures beside its timing (tokens/s, peak memory, the
// parameters of its configuration, a loss per step), like Google Benchmark's
// user counters but any JSON scalar or a list of numbers. gpuprof writes them
// as they are and compares only the timing. A std::string, never a bare
// literal: that would convert to bool.
using BenchField = std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, std::vector<double>>;
using BenchFields = std::vector<std::pair<std::string, BenchField>>;

struct NamedBenchResult {
  // A constructor, not an aggregate: {"name", result} stays warning-free
  // under -Wmissing-field-initializers.
  NamedBenchResult() = default;
  NamedBenchResult(std::string name_, BenchResult result_, BenchFields fields_ = {})
      : name(std::move(name_)), result(std::move(result_)), fields(std::move(fields_)) {}

  std::string name;  // e.g. "train_step/small/ctx128"
  // A benchmark that did not run (out of memory, unsupported) has no samples
  // and says why in result.stop_reason; gpuprof-compare shows it as the note.
  BenchResult result;
  BenchFields fields;  // written in order under "fields"
  // The parameter values this row ran at (bench_axes.hpp), written under
  // "axes"; the name should carry them too (AxisPoint::row_name).
  AxisPoint axes;
};

namespace detail {

inline void write_bench_field(JsonWriter& json, const BenchField& field) {
  std::visit(
      [&json](const auto& value) {
        if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::vector<double>>) {
          json.begin_array(JsonWriter::one_line);
          for (const double number : value) json.value(number);
          json.end_array();
        } else {
          json.value(value);
        }
      },
      field);
}

}  // namespace detail

// What a bench file says beside its runs: the machine they ran on. The
// caller captures it (capture_environment(), at the end of the runs, so that
// the clocks are the ones they ran at); writing a file never probes the machine.
struct BenchFileOptions {
  Environment environment;
};

// {"schema": "gpuprof.bench", "version": 1, "environment": {...}, "benchmarks": [...]}:
// each benchmark with its timing source, both summaries (samples included),
// cold call, warm-up count, stop reason, clocks, throttled samples (their
// count, a flag per sample and their times, throttled_ms, which a reader
// leaves out of the comparison), its fields and its axis values ({} for a
// row of no axes).
inline std::string to_bench_json(const std::vector<NamedBenchResult>& runs, const BenchFileOptions& options) {
  JsonWriter json;
  json.begin_object()
      .member("schema", "gpuprof.bench")
      .member("version", bench_json_version)
      .key("environment");
  write_environment_json(json, options.environment);
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
    // The times of the throttled samples: samples_ms is sorted, so the flags
    // above no longer say which of its times they were.
    const std::vector<double>& primary_ms =
        r.timing_source == TimingSource::cuda_events ? r.gpu_ms : r.host_ms;
    json.end_array().key("throttled_ms").begin_array(JsonWriter::one_line);
    if (r.clocks.size() == primary_ms.size())
      for (std::size_t i = 0; i < r.clocks.size(); ++i)
        if (r.clocks[i].throttled() && std::isfinite(primary_ms[i])) json.value(primary_ms[i]);
    json.end_array().key("fields").begin_object(JsonWriter::one_line);
    for (const auto& [name, field] : run.fields) {
      json.key(name);
      detail::write_bench_field(json, field);
    }
    json.end_object().key("axes").begin_object(JsonWriter::one_line);
    for (const auto& [axis, value] : run.axes.values()) {
      json.key(axis);
      std::visit([&json](const auto& v) { json.value(v); }, value.value());
    }
    json.end_object().end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

inline void write_bench_json(const std::vector<NamedBenchResult>& runs, const std::string& path,
                             const BenchFileOptions& options) {
  write_file_atomically(path, to_bench_json(runs, options));
}

GPUPROF_NAMESPACE_END
