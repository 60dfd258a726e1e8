// gpuprof/report/read_bench_json.hpp: the reader of gpuprof.bench files
// (bench_json.hpp), and read_measured_run, which reads either file
// gpuprof-compare takes (a report or a bench file) as the rows compare_runs
// compares.
//
// ```cpp
// #include <gpuprof/compare.hpp>
// #include <gpuprof/report/read_bench_json.hpp>
// gpuprof::Comparison compare_files(const std::string& base, const std::string& next) {
//   return gpuprof::compare_runs(gpuprof::read_measured_run(base), gpuprof::read_measured_run(next));
// }
// ```
//
// Read as strictly as reports (read_json.hpp): a file that is neither, or
// breaks its schema, throws gpuprof::InputError naming the path.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "../axes.hpp"
#include "../clock_rule.hpp"
#include "../compare.hpp"
#include "../detail/json_reader.hpp"
#include "../detail/number_text.hpp"
#include "../error.hpp"
#include "../terminal_text.hpp"
#include "read_json.hpp"
#include "schema_versions.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

// What a gpuprof.bench row with "axes" is matched on: its benchmark (the
// name without its "[axis=value,...]" as written from the axes) and its axis
// values sorted by axis, so that rows match whatever order a writer declared
// its axes in; "" (match on the name) for a row without axes.
inline std::string bench_match_key(const Json& entry) {
  const Json* axes = optional_member(entry, "axes");
  if (!axes) return "";
  std::vector<std::pair<std::string, AxisValue>> values = read_member(*axes, "axes", [](const Json& object) {
    std::vector<std::pair<std::string, AxisValue>> read;
    for (const std::string& axis : object.keys()) {
      const Json& value = object[axis];
      if (value.is_string()) read.emplace_back(axis, value.as_string());
      else if (value.is_number() && value.as_number() == std::trunc(value.as_number()) &&
               std::fabs(value.as_number()) < 9e15)
        read.emplace_back(axis, static_cast<std::int64_t>(value.as_number()));
      else if (value.is_number()) read.emplace_back(axis, value.as_number());
      else throw InputError(axis + " is a " + Json::type_name(value.type()) + ", not a number or text");
    }
    return read;
  });
  if (values.empty()) return "";
  const std::string& name = string_of(entry, "name");
  try {
    const std::string written = AxisPoint(values).row_name("");
    const bool suffixed = name.size() >= written.size() &&
                          name.compare(name.size() - written.size(), written.size(), written) == 0;
    std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return AxisPoint(std::move(values))
        .row_name(suffixed ? name.substr(0, name.size() - written.size()) : name);
  } catch (const InputError&) {
    throw;
  } catch (const Error& error) {  // the axes' own rules (names, kinds), broken by the file
    throw InputError("benchmark \"" + name + "\": " + error.what());
  }
}

// A row's SM clock readings and throttled flags, in sample order (absent:
// none read).
inline SampleClocks sample_clocks(const Json& entry) {
  SampleClocks clocks;
  if (const Json* sm_mhz = optional_member(entry, "sm_clock_mhz"))
    for (const Json& mhz :
         read_member(*sm_mhz, "sm_clock_mhz",
                     [](const Json& v) -> const std::vector<Json>& { return v.elements(); })) {
      clocks.sm_mhz.push_back(
          read_member(mhz, "sm_clock_mhz", [](const Json& v) { return v.as_integer<int>(); }));
      require(clocks.sm_mhz.back() >= -1,
              "sm_clock_mhz: " + std::to_string(clocks.sm_mhz.back()) + " MHz (-1: unknown)");
    }
  if (const Json* flags = optional_member(entry, "throttled"))
    for (const Json& flag : read_member(
             *flags, "throttled", [](const Json& v) -> const std::vector<Json>& { return v.elements(); }))
      clocks.throttled.push_back(read_member(flag, "throttled", [](const Json& v) { return v.as_bool(); }));
  require(clocks.throttled.size() == clocks.sm_mhz.size(),
          "sm_clock_mhz and throttled differ in length (" + std::to_string(clocks.sm_mhz.size()) + " and " +
              std::to_string(clocks.throttled.size()) + ")");
  return clocks;
}

// The times of a row's samples taken while the GPU was throttled (absent in
// files written before they were recorded: none left out).
inline std::vector<double> throttled_times(const Json& entry) {
  std::vector<double> times;
  if (const Json* throttled = optional_member(entry, "throttled_ms"))
    for (const Json& ms :
         read_member(*throttled, "throttled_ms",
                     [](const Json& v) -> const std::vector<Json>& { return v.elements(); })) {
      times.push_back(read_member(ms, "throttled_ms", [](const Json& v) { return v.as_number(); }));
      require(std::isfinite(times.back()) && times.back() >= 0,
              "throttled_ms: " + shortest_decimal(times.back()) + " ms");
    }
  return times;
}

// gpuprof.bench files (write_bench_json): one row per named benchmark, with
// samples; one without (it did not run) has its stop reason as the note. The
// benchmarks' "fields" are the writer's own and not compared; their "axes"
// (absent before parameter axes) decide which rows match. The clock rule
// (clock_rule.hpp) leaves the samples named in "throttled_ms" out and reads
// the spread of "sm_clock_mhz"; the run's `clocks` count them. Read as
// strictly as reports: a version this reader knows, members of their own
// type, a known timing source, non-negative samples, throttled times that
// are samples of their row and each name once.
inline MeasuredRun measured_run_from_bench_results(const Json& doc, const ClockRule& rule = {}) {
  const std::int64_t version = integer_of<std::int64_t>(doc, "version");
  if (version < 1 || version > bench_json_version)
    throw InputError("gpuprof.bench version " + std::to_string(version) +
                     " is not one this reader knows (1 to " + std::to_string(bench_json_version) + ")");
  MeasuredRun run;
  if (const Json* env = optional_member(doc, "environment"))
    run.environment =
        read_member(*env, "environment", [](const Json& value) { return environment_from_json(value); });
  std::set<std::string> names;
  for (const Json& entry : doc["benchmarks"].elements()) {
    const std::string& name = string_of(entry, "name");
    require(names.insert(name).second, "two benchmarks are named " + name);
    const bool gpu = timing_source_from_name(string_of(entry, "timing_source")) == TimingSource::cuda_events;
    const Summary s =
        gpu ? summary_from_json(entry["gpu_ms"], "gpu_ms") : summary_from_json(entry["host_ms"], "host_ms");
    ClockedMeasurement clocked = read_member(entry, name.c_str(), [&](const Json& row) {
      return measurement_under_clock_rule(s.sorted, throttled_times(row), sample_clocks(row), rule);
    });
    clocked.measurement.note = s.n == 0 ? string_of(entry, "stop_reason") : gpu ? "" : "host clock";
    add_row_clocks(run.clocks, clocked, rule);
    run.rows.push_back({"bench", name, std::move(clocked.measurement), bench_match_key(entry)});
  }
  return run;
}

// A run from a parsed file gpuprof-compare reads: a gpuprof report or a
// gpuprof.bench file; throws gpuprof::Error for anything else.
inline MeasuredRun measured_run_from_json(const Json& doc, const ClockRule& rule = {}) {
  const std::string schema = doc.is_object() && doc.contains("schema") ? doc["schema"].as_string() : "";
  MeasuredRun run;
  if (schema == "gpuprof.report") run = measured_run(report_from_json(doc));
  else if (schema == "gpuprof.bench") run = measured_run_from_bench_results(doc, rule);
  else
    throw InputError("unknown file schema \"" + schema +
                     "\" (expected gpuprof.report or gpuprof.bench; "
                     "merged reports are compared through their per-rank reports)");
  run.kind = schema;
  return run;
}

}  // namespace detail

// A report or gpuprof.bench file as a MeasuredRun, a bench file's rows under
// the clock rule; errors name the path, escaped as terminal_safe() writes it.
inline MeasuredRun read_measured_run(const std::string& path, const ClockRule& rule = {}) {
  const detail::Json doc = detail::parse_json_file(path);
  try {
    MeasuredRun run = detail::measured_run_from_json(doc, rule);
    run.source = path;
    return run;
  } catch (const Error& error) {
    throw InputError(terminal_safe(path + ": " + error.what()));
  }
}

GPUPROF_NAMESPACE_END
