// GPU clocks in gpuprof.bench files: the writer names the samples taken
// while the GPU was throttled (throttled_ms), the reader leaves them out of
// the rows and counts them (clock_rule.hpp), and a comparison says once what
// the clocks did (run_clocks.hpp). Files without throttled_ms still read.
#include <gpuprof/compare.hpp>
#include <gpuprof/compare_rounds.hpp>
#include <gpuprof/report/bench_json.hpp>
#include <gpuprof/report/read_bench_json.hpp>

#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "support/exit_status.hpp"
#include "support/json_parse.hpp"
#include "support/occurrences.hpp"
#include "support/temporary_directory.hpp"

using gpuprof::Verdict;
using gpuprof_test::occurrences;

namespace {

// A GPU-timed bench result: `kept` samples near `ms` at SM clocks from
// `low_mhz` to 1980 MHz, then `throttled` samples of `throttled_ms` each,
// read as power-capped at 1400 MHz, every third sample.
gpuprof::BenchResult bench_with_throttling(int kept, int throttled, double ms, double throttled_ms,
                                           int low_mhz = 1980) {
  gpuprof::BenchResult result;
  result.timing_source = gpuprof::TimingSource::cuda_events;
  int kept_taken = 0;
  for (int i = 0; i < kept + throttled; ++i) {
    const bool is_throttled = (i % 3 == 2 && i / 3 < throttled) || kept_taken == kept;
    if (is_throttled) {
      result.gpu_ms.push_back(throttled_ms);
      result.clocks.push_back({1400, 2619, gpuprof::throttle_reason::sw_power_cap});
      ++result.throttled_samples;
    } else {
      result.gpu_ms.push_back(ms * (1 + 0.002 * (kept_taken % 5)));
      result.clocks.push_back({kept_taken == 0 ? low_mhz : 1980, 2619, 0});
      ++kept_taken;
    }
    result.host_ms.push_back(result.gpu_ms.back() + 0.05);
  }
  result.gpu = gpuprof::summarize(result.gpu_ms);
  result.host = gpuprof::summarize(result.host_ms);
  result.stop_reason = std::to_string(kept + throttled) + " iterations";
  return result;
}

gpuprof::MeasuredRun read_back(const std::string& text, const gpuprof::ClockRule& rule = {}) {
  return gpuprof::detail::measured_run_from_json(gpuprof_test::parse_json(text), rule);
}

std::string bench_file(const gpuprof::BenchResult& result) {
  return gpuprof::to_bench_json({{"step", result}}, {});
}

// The file as written before throttled times were recorded.
std::string without_throttled_times(const std::string& text) {
  return std::regex_replace(text, std::regex(R"("throttled_ms": *\[[^\]]*\], *)"), "");
}

std::string with_throttled_times(const std::string& text, const std::string& times) {
  return std::regex_replace(text, std::regex(R"("throttled_ms": *\[[^\]]*\])"), "\"throttled_ms\": " + times);
}

}  // namespace

TEST_CASE("gpuprof.bench: throttled samples are written by their times, left out when read and counted") {
  const gpuprof::BenchResult result = bench_with_throttling(8, 2, 1.0, 1.7);
  const std::string text = bench_file(result);
  const gpuprof_test::Json row = gpuprof_test::parse_json(text)["benchmarks"][0];
  REQUIRE(row["throttled_ms"].size() == 2);
  CHECK(row["throttled_ms"][0].as_number() == 1.7);
  CHECK(row["gpu_ms"]["samples_ms"].size() == 10);  // the file keeps every sample

  const gpuprof::MeasuredRun run = read_back(text);
  REQUIRE(run.rows.size() == 1);
  const gpuprof::Measurement& m = run.rows[0].measurement;
  CHECK(m.n == 8);
  CHECK(m.samples_ms.back() < 1.1);
  CHECK(run.clocks.throttled_left_out == 2);
  CHECK(run.clocks.throttled_kept == 0);

  gpuprof::ClockRule keep;
  keep.leave_out_throttled = false;
  const gpuprof::MeasuredRun kept = read_back(text, keep);
  CHECK(kept.rows[0].measurement.n == 10);
  CHECK(kept.clocks.throttled_kept == 2);
}

TEST_CASE("gpuprof.bench: a row whose every sample was throttled keeps them, and says so") {
  const gpuprof::MeasuredRun run = read_back(bench_file(bench_with_throttling(0, 6, 1.0, 1.7)));
  CHECK(run.rows[0].measurement.n == 6);
  CHECK(run.clocks.throttled_left_out == 0);
  CHECK(run.clocks.throttled_kept == 6);
  const gpuprof::Comparison c = gpuprof::compare_runs(run, run);
  CHECK(occurrences(gpuprof::to_table(c),
                    "6 base and 6 new sample(s) were taken while the GPU was throttled "
                    "and are kept in the verdict") == 1);
}

TEST_CASE("gpuprof.bench: the verdict ignores throttled samples; without their times they count") {
  // New: as fast as base, but most of its samples ran throttled, 20 % slower
  // (and so steady enough that a single pair would call them slower).
  const std::string base = bench_file(bench_with_throttling(20, 0, 1.0, 0));
  const std::string next = bench_file(bench_with_throttling(6, 94, 1.0, 1.2));
  const gpuprof::Comparison c = gpuprof::compare_runs(read_back(base), read_back(next));
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].verdict == Verdict::same);
  CHECK(c.rows[0].next->n == 6);

  // The same files as written before throttled times were recorded: every sample counts.
  const gpuprof::Comparison old = gpuprof::compare_runs(read_back(without_throttled_times(base)),
                                                        read_back(without_throttled_times(next)));
  CHECK(old.rows[0].verdict == Verdict::slower);
  CHECK(old.rows[0].next->n == 100);
}

TEST_CASE("gpuprof.bench: throttling and unlocked clocks are warned about once per comparison") {
  // Kept samples ran from 1700 to 1980 MHz, 14 % of their median: clocks not locked.
  gpuprof::NamedBenchResult first{"step", bench_with_throttling(10, 2, 1.0, 1.7, 1700)};
  gpuprof::NamedBenchResult second{"loss", bench_with_throttling(10, 1, 0.5, 0.9, 1700)};
  const std::string file = gpuprof::to_bench_json({first, second}, {});
  const gpuprof::MeasuredRun run = read_back(file);
  CHECK(run.clocks.throttled_left_out == 3);
  CHECK(run.clocks.min_sm_mhz == 1700);
  CHECK(run.clocks.max_sm_mhz == 1980);

  const std::string pair = gpuprof::to_table(gpuprof::compare_runs(run, run));
  CAPTURE(pair);
  CHECK(occurrences(pair, "the SM clock moved 1700-1980 MHz (14.1% > 2%) within one run of a row") == 1);
  CHECK(occurrences(pair,
                    "3 base and 3 new sample(s) were taken while the GPU was throttled and are left out "
                    "of the verdict") == 1);

  const std::vector<gpuprof::MeasuredRun> runs(3, run);
  const std::string rounds = gpuprof::to_markdown(gpuprof::compare_rounds(runs, runs));
  CAPTURE(rounds);
  CHECK(occurrences(rounds, "the SM clock moved") == 1);
  CHECK(occurrences(rounds, "9 base and 9 new sample(s) were taken while the GPU was throttled") == 1);

  // Locked clocks, nothing throttled: no clock warning at all.
  const gpuprof::MeasuredRun steady = read_back(bench_file(bench_with_throttling(10, 0, 1.0, 0)));
  CHECK(gpuprof::compare_runs(steady, steady).warnings.empty());
}

TEST_CASE("gpuprof.bench: throttled times that are not the row's samples are bad input") {
  const std::string text = bench_file(bench_with_throttling(8, 2, 1.0, 1.7));
  for (const char* times : {"[1.5]", "[1.7, 1.7, 1.7]", "[-1]", "[\"1.7\"]", "{}", "[1e999]"}) {
    CAPTURE(times);
    CHECK_THROWS_AS(read_back(with_throttled_times(text, times)), gpuprof::InputError);
  }
  CHECK(read_back(with_throttled_times(text, "[]")).rows[0].measurement.n == 10);
  const std::string short_flags =
      std::regex_replace(text, std::regex(R"("throttled": *\[[^\]]*\])"), "\"throttled\": [true]");
  CHECK_THROWS_AS(read_back(short_flags), gpuprof::InputError);
  const std::string bad_clock =
      std::regex_replace(text, std::regex(R"("sm_clock_mhz": *\[[0-9]+)"), "\"sm_clock_mhz\": [-5");
  CHECK_THROWS_AS(read_back(bad_clock), gpuprof::InputError);
}

#ifdef GPUPROF_COMPARE_TOOL
namespace {
// A GPU-timed bench result of 20 samples near `ms`, every one at `sm_mhz`.
gpuprof::BenchResult bench_at_clock(double ms, int sm_mhz) {
  gpuprof::BenchResult result;
  result.timing_source = gpuprof::TimingSource::cuda_events;
  for (int i = 0; i < 20; ++i) {
    result.gpu_ms.push_back(ms * (1 + 0.002 * (i % 5)));
    result.host_ms.push_back(result.gpu_ms.back() + 0.05);
    result.clocks.push_back({sm_mhz, 2619, 0});
  }
  result.gpu = gpuprof::summarize(result.gpu_ms);
  result.host = gpuprof::summarize(result.host_ms);
  result.stop_reason = "20 iterations";
  return result;
}

std::string written(const gpuprof_test::TemporaryDirectory& dir, const std::string& name,
                    const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST_CASE("gpuprof-compare: --reference-sm-mhz scales samples to one clock, --keep-throttled keeps them") {
  gpuprof_test::TemporaryDirectory dir;
  const std::string tool = GPUPROF_COMPARE_TOOL;
  // The same work, new at 1800 MHz instead of 1980: 10 % slower by the clock alone.
  const std::string base = written(dir, "base.json", bench_file(bench_at_clock(1.0, 1980)));
  const std::string slow_clock = written(dir, "new.json", bench_file(bench_at_clock(1.1, 1800)));
  CHECK(gpuprof_test::exit_status_of(tool + " " + base + " " + slow_clock) == 1);
  CHECK(gpuprof_test::exit_status_of(tool + " " + base + " " + slow_clock + " --reference-sm-mhz 1980") == 0);

  // New as fast as base, but most samples throttled and 20 % slower: left out unless kept.
  const std::string steady = written(dir, "steady.json", bench_file(bench_with_throttling(20, 0, 1.0, 0)));
  const std::string throttled =
      written(dir, "throttled.json", bench_file(bench_with_throttling(6, 94, 1.0, 1.2)));
  CHECK(gpuprof_test::exit_status_of(tool + " " + steady + " " + throttled) == 0);
  CHECK(gpuprof_test::exit_status_of(tool + " " + steady + " " + throttled + " --keep-throttled") == 1);

  for (const char* bad : {"0", "-5", "1e3", "200000", ""})
    CHECK(gpuprof_test::exit_status_of(tool + " " + base + " " + slow_clock + " --reference-sm-mhz '" + bad +
                                       "'") == 2);
}
#endif
