// gpuprof/bench.hpp: bench(fn, options), timing a function the honest way.
//
// ```cpp
// #include <gpuprof/bench.hpp>
// #include <iostream>
// int main() {
//   gpuprof::BenchOptions options;  // options.stream = s: GPU work timed with CUDA events
//   options.iters = 20;
//   double sum = 0;
//   auto result = gpuprof::bench([&] { for (int i = 0; i < 10000; ++i) sum += i * 1e-9; }, options);
//   std::cout << result.summary() << '\n';
// }
// ```
//
// One cold call (timed, reported apart), warm-up calls, then samples: a CUDA
// event pair around fn on options.stream, a device synchronization after each
// (the course's protocol) and the host clock. Scopes fn opens in the cold call
// and the warm-up are left out of the report and counted apart, so a scope in
// fn reports `iters` instances. Optional: an L2 flush per sample, CUDA-graph
// replay, sampling to a noise target or a time budget, and hardware counters
// per scope. Without a usable GPU the host clock is the time, and the result
// says so. The protocol in full: docs/headers.md#bench-the-protocol.
#pragma once
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "clock.hpp"
#include "config.hpp"
#include "diagnostics.hpp"
#include "counter_data.hpp"
#include "cuda_events.hpp"
#include "detail/bench_resources.hpp"
#include "detail/nvml.hpp"
#include "detail/recorder.hpp"
#include "environment.hpp"
#include "error.hpp"
#include "report_model.hpp"
#include "stats.hpp"

GPUPROF_NAMESPACE_BEGIN

struct BenchOptions {
  int warmup = 5;               // untimed calls after the cold one
  double warmup_ms = 0;         // then keep warming up until this much time has passed
  int iters = 10;               // samples, unless target_rel_noise is set
  double budget_ms = 0;         // > 0: stop sampling once this much time has been spent
  double target_rel_noise = 0;  // > 0: sample until stddev/mean < this ...
  int min_iters = 5;            // ... with at least this many samples ...
  int max_iters = 1000;         // ... and at most this many
  bool flush_l2 = false;        // overwrite the whole L2 before every sample (untimed)
  bool cuda_graph = false;      // capture fn once into a CUDA graph, time its launches
  Stream stream = nullptr;      // where events (and flushes, graph launches) go
  // true: scopes opened by the cold call and the warm-up stay in the report's
  // statistics (for a caller that names its warm-up scopes itself).
  bool keep_warmup_scopes = false;
  // Set (e.g. to gpuprof::counter_replay() from counters.hpp) to measure
  // hardware counters after the samples: it calls fn as many times as the
  // metric set needs replay passes (eagerly, also with cuda_graph) and its
  // CounterSet goes to BenchResult::counters. The scopes of those calls are
  // left out of the report, as the warm-up's are (and counted with them).
  std::function<CounterSet(const std::function<void()>& fn)> counters;
};

struct BenchResult {
  std::vector<double> gpu_ms;   // per sample; empty when timed with the host clock
  std::vector<double> host_ms;  // per sample, always
  Summary gpu;
  Summary host;
  double cold_ms = 0;  // the very first call, on the primary clock
  int warmup_calls = 0;
  TimingSource timing_source = TimingSource::host_clock;
  std::string timing_note;  // why the host clock, or what was ignored
  std::string stop_reason;  // why sampling stopped
  // GPU clocks read right after each sample (NVML); empty when they could not
  // be read (clocks_note says why). Samples taken while the GPU was power- or
  // thermally throttled are kept, not dropped, and counted here: see
  // docs/report-schema.md ("Clocks and throttling").
  std::vector<ClockSample> clocks;
  std::size_t throttled_samples = 0;
  std::string clocks_note;
  CounterSet counters;  // when BenchOptions::counters was set: its passes, values per scope, note

  const Summary& primary() const { return timing_source == TimingSource::cuda_events ? gpu : host; }
  // One line: mean ± std, median, p10/p90, min/max, cv, n, cold, and the
  // verdict when unstable.
  std::string summary() const;
};

namespace detail {

inline void check_bench_options(const BenchOptions& options) {
  const auto fail = [](const std::string& what) { throw Error("gpuprof::bench: " + what); };
  if (options.warmup < 0) fail("warmup must be >= 0, got " + std::to_string(options.warmup));
  if (!(options.warmup_ms >= 0)) fail("warmup_ms must be >= 0");
  if (options.iters < 1) fail("iters must be >= 1, got " + std::to_string(options.iters));
  if (!(options.budget_ms >= 0)) fail("budget_ms must be >= 0");
  if (!(options.target_rel_noise >= 0)) fail("target_rel_noise must be >= 0");
  if (options.min_iters < 2) fail("min_iters must be >= 2 (a noise estimate needs two samples)");
  if (options.max_iters < options.min_iters) fail("max_iters must be >= min_iters");
}

// Why to stop after `taken` samples; nothing while sampling should go on.
inline std::optional<std::string> stop_reason(const BenchOptions& options, const std::vector<double>& primary,
                                              double spent_ms) {
  const int taken = static_cast<int>(primary.size());
  char text[160];
  if (options.budget_ms > 0 && spent_ms >= options.budget_ms) {
    std::snprintf(text, sizeof text, "time budget of %g ms spent after %d sample(s)", options.budget_ms,
                  taken);
    return std::string(text);
  }
  if (options.target_rel_noise <= 0) {
    if (taken >= options.iters) return std::to_string(taken) + " iterations";
    return std::nullopt;
  }
  if (taken < options.min_iters) return std::nullopt;
  const double noise = summarize(primary).cv;  // sample stddev / mean
  if (noise < options.target_rel_noise) {
    std::snprintf(text, sizeof text, "noise target met: cv %.2f%% < %g%% after %d samples", 100 * noise,
                  100 * options.target_rel_noise, taken);
    return std::string(text);
  }
  if (taken >= options.max_iters) {
    std::snprintf(text, sizeof text, "max_iters cap %d reached before the noise target (cv %.2f%% >= %g%%)",
                  options.max_iters, 100 * noise, 100 * options.target_rel_noise);
    return std::string(text);
  }
  return std::nullopt;
}

inline void synchronize_device() {
#if GPUPROF_WITH_CUDA
  GPUPROF_CUDA_CHECK(cudaDeviceSynchronize());
#endif
}

struct Sample {
  double host_ms = 0;
  double gpu_ms = -1;
};

// Reads the current GPU's clocks after each sample, when NVML can; says once
// per process why it cannot.
class BenchClocks {
 public:
  explicit BenchClocks(bool gpu_timing) {
    if (!gpu_timing) return;
    uuid_ = current_gpu_identity().uuid;
    read_gpu_clocks(uuid_, why_not_);
    if (why_not_.empty()) return;
    diagnose(Severity::note, "bench() does not sample GPU clocks or throttling: " + why_not_, "bench clocks");
  }
  void after_sample(BenchResult& result) const {
    if (!why_not_.empty() || uuid_.empty()) return;
    std::string ignored;
    result.clocks.push_back(read_gpu_clocks(uuid_, ignored));
    if (result.clocks.back().throttled()) ++result.throttled_samples;
  }
  const std::string& why_not() const { return why_not_; }

 private:
  std::string uuid_;
  std::string why_not_;
};

// From bench()'s start (before the cold call) to the end of its warm-up: the
// span whose scopes report() leaves out (Recorder::leave_out). The warm-up's
// graph replays have completed when it ends (each call synchronizes), so the
// replays read by then are the span's.
class WarmupSpan {
 public:
  explicit WarmupSpan(bool keep_scopes)
      : keep_scopes_(keep_scopes),
        begin_ticks_(host_ticks()),
        begin_ns_(host_now_ns()),
        begin_replay_(keep_scopes ? 0 : replays_read()) {}
  void end() const {
    if (!keep_scopes_)
      recorder().leave_out(
          {begin_ticks_, host_ticks(), begin_ns_, host_now_ns(), begin_replay_, replays_read()});
  }

 private:
  static std::size_t replays_read() {
#if GPUPROF_WITH_CUDA
    return recorder().graph_timings().replays_read();
#else
    return 0;
#endif
  }
  bool keep_scopes_;
  std::int64_t begin_ticks_, begin_ns_;
  std::size_t begin_replay_;
};

// After the samples: the counter passes, their scopes left out of the report.
template <class Run>
void measure_counters(const BenchOptions& options, Run& run, BenchResult& result) {
  if (!options.counters) return;
  const WarmupSpan passes(false);
  result.counters = options.counters(run);
  passes.end();
}

// Warm-up, then samples until stop_reason() says so. `measure(run)` times
// one call of `run` (fn itself, or a launch of its graph) as a Sample.
template <class Measure, class Run>
void warm_up_and_sample(const BenchOptions& options, const WarmupSpan& span, Measure& measure, Run& run,
                        BenchResult& result) {
  const bool gpu = result.timing_source == TimingSource::cuda_events;
  const std::int64_t warmup_start = host_now_ns();
  while (result.warmup_calls < options.warmup || ns_to_ms(host_now_ns() - warmup_start) < options.warmup_ms) {
    measure(run);
    ++result.warmup_calls;
  }
  span.end();

  const BenchClocks clocks(gpu);
  result.clocks_note = gpu ? clocks.why_not() : "GPU clocks are only sampled with GPU timing";
  const std::int64_t sampling_start = host_now_ns();
  for (;;) {
    const Sample sample = measure(run);
    result.host_ms.push_back(sample.host_ms);
    if (gpu) result.gpu_ms.push_back(sample.gpu_ms);
    clocks.after_sample(result);
    auto reason =
        stop_reason(options, gpu ? result.gpu_ms : result.host_ms, ns_to_ms(host_now_ns() - sampling_start));
    if (reason) {
      result.stop_reason = std::move(*reason);
      break;
    }
  }
  result.host = summarize(result.host_ms);
  result.gpu = summarize(result.gpu_ms);
}

}  // namespace detail

template <class Fn>
BenchResult bench(Fn&& fn, const BenchOptions& options = {}) {
  detail::check_bench_options(options);
  const detail::Recorder& recorder = detail::recorder();  // probes the device once, says so once
  const detail::WarmupSpan warmup_span(options.keep_warmup_scopes);
  BenchResult result;
  auto call_fn = [&fn] { fn(); };

  if (!recorder.gpu_timing()) {
    result.timing_source = TimingSource::host_clock;
    result.timing_note = recorder.device().usable ? "GPU timing turned off with set_gpu_timing(false)"
                                                  : recorder.device().reason;
    if (options.flush_l2 || options.cuda_graph)
      result.timing_note += "; flush_l2 and cuda_graph need GPU timing and were ignored";
    // With a device present (timing merely turned off) the protocol still
    // synchronizes after each call, so the host time covers the GPU work.
    const bool synchronize = recorder.device().usable;
    auto measure = [synchronize](auto& run) {
      const std::int64_t begin = host_now_ns();
      run();
      if (synchronize) detail::synchronize_device();
      return detail::Sample{ns_to_ms(host_now_ns() - begin), -1};
    };
    result.cold_ms = measure(call_fn).host_ms;
    detail::warm_up_and_sample(options, warmup_span, measure, call_fn, result);
    detail::measure_counters(options, call_fn, result);
    return result;
  }

#if GPUPROF_WITH_CUDA
  result.timing_source = TimingSource::cuda_events;
  const ScopedEventPair events;
  std::optional<detail::L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();
  const Stream stream = options.stream;
  auto measure = [&](auto& run) {
    if (flusher) flusher->flush(stream);
    events->record_begin(stream);
    const std::int64_t begin = host_now_ns();
    run();
    events->record_end(stream);
    detail::synchronize_device();
    const std::int64_t end = host_now_ns();
    return detail::Sample{ns_to_ms(end - begin), events->elapsed_ms()};
  };
  // The cold call is fn itself, also with cuda_graph: it loads the kernels
  // before the capture, which then records the steady-state launches.
  result.cold_ms = measure(call_fn).gpu_ms;
  if (!options.cuda_graph) {
    detail::warm_up_and_sample(options, warmup_span, measure, call_fn, result);
    detail::measure_counters(options, call_fn, result);
    return result;
  }
  detail::CapturedGraph graph(call_fn, stream);
  auto launch_graph = [&graph] { graph.launch(); };
  detail::warm_up_and_sample(options, warmup_span, measure, launch_graph, result);
  detail::measure_counters(options, call_fn, result);
#endif
  return result;
}

inline std::string BenchResult::summary() const {
  const Summary& s = primary();
  char text[400];
  std::snprintf(text, sizeof text,
                "%s %.4g ms \xC2\xB1 %.3g | median %.4g p10 %.4g p90 %.4g | min %.4g max %.4g | "
                "cv %.2f%% n=%zu | cold %.4g ms",
                timing_source == TimingSource::cuda_events ? "gpu" : "host", s.mean, s.stddev, s.median,
                s.percentile(10), s.percentile(90), s.min, s.max, 100 * s.cv, s.n, cold_ms);
  std::string line = text;
  if (s.unstable) line += " | UNSTABLE: " + s.unstable_reason;
  if (throttled_samples > 0) {
    std::uint64_t reasons = 0;
    for (const ClockSample& clock : clocks) reasons |= clock.throttled() ? clock.throttle_reasons : 0;
    line += " | THROTTLED: " + std::to_string(throttled_samples) + " of " + std::to_string(clocks.size()) +
            " samples (" + throttle_reason_names(reasons & throttle_reason::slows_samples) + ")";
  }
  if (timing_source == TimingSource::host_clock) line += " | host clock: " + timing_note;
  return line;
}

GPUPROF_NAMESPACE_END
