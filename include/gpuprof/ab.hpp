// gpuprof/ab.hpp: ab(base_fn, new_fn), two implementations compared in one
// process, their samples interleaved.
//
// ```cpp
// #include <gpuprof/ab.hpp>
// #include <iostream>
// int gate() {  // exit status of a CI job: 1 when the new code is slower
//   gpuprof::AbOptions options;  // 10 rounds of 10 samples a side; options.bench.stream for GPU work
//   const gpuprof::AbResult r = gpuprof::ab([] { /* old code */ }, [] { /* new code */ }, options);
//   std::cout << gpuprof::to_table(r.comparison);  // "1.070x [1.041, 1.100] ... slower"
//   return r.comparison.regressed() ? 1 : 0;
// }
// ```
//
// Each side is warmed up as bench() does; then `rounds` rounds of one block
// per side in ABBA order, each block a bench() of options.bench.iters samples
// and one run of compare_rounds.hpp: the verdict is a paired t test over the
// blocks' medians, so a drift of the machine falls on both sides alike. With
// GPU clocks read, throttled samples are left out and counted and a moving SM
// clock is warned about once (clock_rule.hpp). The protocol and why:
// docs/compare-and-html.md#interleaved-runs---run.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "bench.hpp"
#include "clock_rule.hpp"
#include "compare.hpp"
#include "compare_rounds.hpp"
#include "config.hpp"
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN

struct AbOptions {
  std::size_t rounds = 10;  // blocks per side; at least 2
  // One block: bench()'s options (iters, stream, flush_l2, cuda_graph ...).
  // Its warm-up applies to each side's first block; later blocks make only
  // bench()'s cold call before their samples.
  BenchOptions bench;
  CompareOptions compare;
  ClockRule clocks;
  std::string name = "ab";  // the row's key
};

struct AbResult {
  Comparison comparison;
  std::vector<BenchResult> base_blocks, new_blocks;  // in round order
  std::size_t base_throttled_left_out = 0, new_throttled_left_out = 0;
};

namespace detail {
inline void check_ab_options(const AbOptions& options) {
  if (options.rounds < 2)
    throw Error("gpuprof::ab: rounds must be >= 2 (one round shows no spread between blocks), got " +
                std::to_string(options.rounds));
  if (options.bench.target_rel_noise > 0 || options.bench.budget_ms > 0)
    throw Error(
        "gpuprof::ab: blocks take a fixed bench.iters samples (no target_rel_noise or budget_ms), "
        "so both sides get the same weight in every round");
  check_bench_options(options.bench);
}
}  // namespace detail

template <class BaseFn, class NewFn>
AbResult ab(BaseFn&& base_fn, NewFn&& new_fn, const AbOptions& options = {}) {
  detail::check_ab_options(options);
  AbResult result;
  std::vector<MeasuredRun> base_runs, new_runs;
  const auto block = [&](auto& fn, bool first, std::vector<MeasuredRun>& runs,
                         std::vector<BenchResult>& blocks, std::size_t& throttled) {
    BenchOptions bench_options = options.bench;
    if (!first) {
      bench_options.warmup = 0;
      bench_options.warmup_ms = 0;
    }
    BenchResult bench_result = bench(fn, bench_options);
    const bool gpu = bench_result.timing_source == TimingSource::cuda_events;
    const ClockedMeasurement clocked = measurement_under_clock_rule(
        gpu ? bench_result.gpu_ms : bench_result.host_ms, bench_result.clocks, options.clocks);
    throttled += clocked.throttled_left_out;
    MeasuredRun run;
    run.rows.push_back({"bench", options.name, clocked.measurement});
    add_row_clocks(run.clocks, clocked, options.clocks);
    runs.push_back(std::move(run));
    blocks.push_back(std::move(bench_result));
  };
  for (std::size_t round = 1; round <= options.rounds; ++round) {
    for (const bool base_side : {round % 2 == 1, round % 2 == 0}) {
      if (base_side)
        block(base_fn, round == 1, base_runs, result.base_blocks, result.base_throttled_left_out);
      else block(new_fn, round == 1, new_runs, result.new_blocks, result.new_throttled_left_out);
    }
  }
  result.comparison = compare_rounds(base_runs, new_runs, options.compare);
  const auto clocks_read = [](const std::vector<MeasuredRun>& runs) {
    return std::any_of(runs.begin(), runs.end(),
                       [](const MeasuredRun& run) { return run.clocks.max_sm_mhz > 0; });
  };
  if (options.clocks.reference_sm_mhz > 0 && (clocks_read(base_runs) || clocks_read(new_runs)))
    result.comparison.warnings.push_back("times are scaled to an SM clock of " +
                                         std::to_string(options.clocks.reference_sm_mhz) + " MHz");
  return result;
}

GPUPROF_NAMESPACE_END
