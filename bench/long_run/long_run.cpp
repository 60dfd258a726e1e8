// long_run: a training loop's scopes left on for the whole run. One step is
// a `step` scope holding 12 `layer` scopes, each holding `attention` and
// `mlp`: 37 scopes per step, host clock. Cases, each in a child process so
// that its peak memory (ru_maxrss) is its own:
//   steps N, report at the end   record ns/scope, memory growth while
//                                recording, report() s, write_json s, JSON
//                                size, peak RSS
//   steps N, report every 1,000  the same with report() called every 1,000
//                                steps, and the total time spent in report()
//   sketch accuracy              100,000 instances of a heavy-tailed duration
//                                in full-trace mode: the report's p10, q1,
//                                median, q3, p90, p99 against the exact ones
//                                from the trace
// Usage: long_run [--steps 10000,100000] [--every-steps 10000,100000,1000000] [--json PATH]
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/report.hpp>

#include "child_case.hpp"

namespace {

using long_run::Clock;
using long_run::peak_mib;
using long_run::resident_mib;
using long_run::seconds_since;

void one_step() {
  GPUPROF_SCOPE("step");
  for (int layer = 0; layer < 12; ++layer) {
    GPUPROF_SCOPE("layer");
    { GPUPROF_SCOPE("attention"); }
    { GPUPROF_SCOPE("mlp"); }
  }
}

struct RunResult {
  long steps = 0, report_every = 0;
  double record_ns_per_scope = 0, memory_growth_mib = 0, report_s = 0, periodic_report_s = 0;
  double write_json_s = 0, json_mib = 0, peak_mib = 0;
  std::uint64_t trace_instances = 0;
};

struct SketchResult {
  std::size_t n = 0;
  double worst_relative_error = 0;
  std::vector<std::vector<double>> rows;  // percentile, exact, sketch, relative error
};

RunResult run_steps(long steps, long report_every, const std::string& json_path) {
  RunResult r;
  r.steps = steps;
  r.report_every = report_every;
  auto& profiler = gpuprof::profiler();
  one_step();  // the tree, the thread, the recorder: set up before measuring
  profiler.reset();
  (void)profiler.report();
  const double before = resident_mib();
  const auto start = Clock::now();
  for (long i = 1; i <= steps; ++i) {
    one_step();
    if (report_every > 0 && i % report_every == 0) {
      const auto at = Clock::now();
      (void)profiler.report();
      r.periodic_report_s += seconds_since(at);
    }
  }
  const double loop_s = seconds_since(start) - r.periodic_report_s;
  r.record_ns_per_scope = loop_s * 1e9 / (37.0 * static_cast<double>(steps));
  r.memory_growth_mib = resident_mib() - before;
  const auto report_start = Clock::now();
  const gpuprof::Report report = profiler.report();
  r.report_s = seconds_since(report_start);
  r.trace_instances = report.instances.size();
  const auto write_start = Clock::now();
  gpuprof::write_json(report, json_path);
  r.write_json_s = seconds_since(write_start);
  struct stat info {};
  if (stat(json_path.c_str(), &info) == 0) r.json_mib = static_cast<double>(info.st_size) / (1024.0 * 1024.0);
  std::remove(json_path.c_str());
  r.peak_mib = peak_mib();
  return r;
}

// Spins for `ns` of the host clock: a scope of that length.
void spin_for(std::int64_t ns) {
  const std::int64_t until = gpuprof::host_now_ns() + ns;
  while (gpuprof::host_now_ns() < until) {
  }
}

SketchResult sketch_accuracy() {
  SketchResult result;
  auto& profiler = gpuprof::profiler();
  profiler.set_trace_window(0);  // full trace: every instance, to compute the exact quantiles from
  profiler.reset();
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> body(std::log(2000.0), 0.4);  // ~2 us
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int i = 0; i < 100'000; ++i) {
    double ns = body(random);
    if (uniform(random) < 0.05) ns = 5000.0 / std::pow(1 - uniform(random), 1 / 1.5);  // Pareto tail
    GPUPROF_SCOPE("heavy_tailed");
    spin_for(static_cast<std::int64_t>(std::min(ns, 2e6)));
  }
  const gpuprof::Report report = profiler.report();
  const gpuprof::Summary& s = report.nodes.at(0).host_ms;
  std::vector<double> exact;
  for (const gpuprof::ScopeInstance& instance : report.instances)
    exact.push_back(gpuprof::ns_to_ms(instance.host_end_ns - instance.host_begin_ns));
  std::sort(exact.begin(), exact.end());
  result.n = exact.size();
  const gpuprof::Summary all = gpuprof::summarize(exact);
  for (double p : {10.0, 25.0, 50.0, 75.0, 90.0, 99.0}) {
    const double truth = all.percentile(p), estimate = s.percentile(p);
    const double error = std::fabs(estimate - truth) / truth;
    result.worst_relative_error = std::max(result.worst_relative_error, error);
    result.rows.push_back({p, truth, estimate, error});
  }
  return result;
}

// Runs fn in a child process (child_case.hpp) and parses what it returned.
template <class Result, class Fn>
Result in_child(Fn fn) {
  const long_run::ChildOutput out = long_run::run_in_child(fn);
  if (out.exit_status != 0) {
    std::fprintf(stderr, "long_run: a case's child process failed (exit status %d)\n", out.exit_status);
    std::exit(1);
  }
  return Result::parse(out.text);
}

std::vector<long> parse_list(const char* text) {
  std::vector<long> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    char* end = nullptr;
    const long value = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || value <= 0) {
      std::fprintf(stderr, "long_run: '%s' is not a list of positive step counts\n", text);
      std::exit(2);
    }
    out.push_back(value);
  }
  return out;
}

struct RunText {
  RunResult r;
  static RunText parse(const std::string& text) {
    RunText out;
    std::istringstream in(text);
    in >> out.r.steps >> out.r.report_every >> out.r.record_ns_per_scope >> out.r.memory_growth_mib >>
        out.r.report_s >> out.r.periodic_report_s >> out.r.write_json_s >> out.r.json_mib >> out.r.peak_mib >>
        out.r.trace_instances;
    return out;
  }
};
std::string to_text(const RunResult& r) {
  std::ostringstream out;
  out.precision(17);
  out << r.steps << ' ' << r.report_every << ' ' << r.record_ns_per_scope << ' ' << r.memory_growth_mib << ' '
      << r.report_s << ' ' << r.periodic_report_s << ' ' << r.write_json_s << ' ' << r.json_mib << ' '
      << r.peak_mib << ' ' << r.trace_instances;
  return out.str();
}

struct SketchText {
  SketchResult s;
  static SketchText parse(const std::string& text) {
    SketchText out;
    std::istringstream in(text);
    in >> out.s.n >> out.s.worst_relative_error;
    for (std::vector<double> row(4); in >> row[0] >> row[1] >> row[2] >> row[3];) out.s.rows.push_back(row);
    return out;
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> at_end = {10'000, 100'000}, every = {10'000, 100'000, 1'000'000};
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--steps" && i + 1 < argc) at_end = parse_list(argv[++i]);
    else if (arg == "--every-steps" && i + 1 < argc) every = parse_list(argv[++i]);
    else if (arg == "--json" && i + 1 < argc) json_path = argv[++i];
    else {
      std::fprintf(stderr, "usage: long_run [--steps N,N] [--every-steps N,N] [--json PATH]\n");
      return 2;
    }
  }
  char directory[] = "/tmp/long_run_XXXXXX";
  if (!mkdtemp(directory)) {
    std::perror("mkdtemp");
    return 2;
  }
  const std::string report_path = std::string(directory) + "/report.json";

  std::vector<RunResult> runs;
  for (long every_n : {0L, 1000L})
    for (long steps : every_n == 0 ? at_end : every)
      runs.push_back(in_child<RunText>([&] { return to_text(run_steps(steps, every_n, report_path)); }).r);
  const SketchResult sketch = in_child<SketchText>([] {
                                const SketchResult s = sketch_accuracy();
                                std::ostringstream out;
                                out.precision(17);
                                out << s.n << ' ' << s.worst_relative_error;
                                for (const auto& row : s.rows)
                                  out << ' ' << row[0] << ' ' << row[1] << ' ' << row[2] << ' ' << row[3];
                                return out.str();
                              }).s;
  rmdir(directory);

  std::printf(
      "| steps | report() | record cost | memory growth | report() at end | all periodic report() | "
      "write_json | JSON | trace kept | peak RSS |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const RunResult& r : runs)
    std::printf("| %ld | %s | %.1f ns/scope | %+.0f MB | %.3f s | %s | %.3f s | %.1f MB | %llu | %.2f GB |\n",
                r.steps, r.report_every ? "every 1,000 steps" : "at the end", r.record_ns_per_scope,
                r.memory_growth_mib * 1.048576, r.report_s,
                r.report_every ? (std::to_string(r.periodic_report_s).substr(0, 5) + " s").c_str() : "-",
                r.write_json_s, r.json_mib * 1.048576, static_cast<unsigned long long>(r.trace_instances),
                r.peak_mib / 1024 * 1.073741824);
  std::printf("\nsketch quantiles vs exact, %zu heavy-tailed instances, full trace:\n", sketch.n);
  std::printf("| percentile | exact ms | sketch ms | relative error |\n|---:|---:|---:|---:|\n");
  for (const auto& row : sketch.rows)
    std::printf("| p%g | %.6f | %.6f | %.3f %% |\n", row[0], row[1], row[2], 100 * row[3]);
  std::printf("worst: %.3f %%\n", 100 * sketch.worst_relative_error);

  if (!json_path.empty()) {
    gpuprof::JsonWriter json;
    json.begin_object().member("benchmark", "long_run").key("runs").begin_array();
    for (const RunResult& r : runs)
      json.begin_object(gpuprof::JsonWriter::one_line)
          .member("steps", r.steps)
          .member("scopes_per_step", 37)
          .member("report_every_steps", r.report_every)
          .member("record_ns_per_scope", r.record_ns_per_scope)
          .member("memory_growth_mib", r.memory_growth_mib)
          .member("final_report_s", r.report_s)
          .member("periodic_report_total_s", r.periodic_report_s)
          .member("write_json_s", r.write_json_s)
          .member("json_mib", r.json_mib)
          .member("trace_instances", r.trace_instances)
          .member("peak_rss_mib", r.peak_mib)
          .end_object();
    json.end_array()
        .key("sketch")
        .begin_object()
        .member("instances", sketch.n)
        .member("worst_relative_error", sketch.worst_relative_error)
        .key("percentiles")
        .begin_array();
    for (const auto& row : sketch.rows)
      json.begin_object(gpuprof::JsonWriter::one_line)
          .member("percentile", row[0])
          .member("exact_ms", row[1])
          .member("sketch_ms", row[2])
          .member("relative_error", row[3])
          .end_object();
    json.end_array().end_object().end_object();
    gpuprof::write_file_atomically(json_path, json.str() + "\n");
  }
  return 0;
}
