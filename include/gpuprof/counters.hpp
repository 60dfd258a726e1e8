// gpuprof/counters.hpp: hardware counters (any Nsight Compute metric) per
// scope or per kernel, through CUPTI's Range Profiler (target gpuprof::cupti).
// While a CounterCapture lives, every report() holds its last measurement and
// its GPU's roofline ceilings. Ranging, replay and costs: docs/counters.md.
//
// ```cpp
// #include <gpuprof/counters.hpp>
// #include <functional>
// gpuprof::Report measure(const std::function<void()>& train_step) {
//   gpuprof::CounterCapture counters;  // default metrics, one range per scope
//   counters.measure(train_step);      // runs the step once per replay pass
//   gpuprof::profiler().reset();       // the passes' timings go, the counters stay
//   train_step();                      // the run the report times
//   return gpuprof::profiler().report();  // + report.counters, report.ceilings
// }
// ```
#pragma once
#if !GPUPROF_WITH_CUPTI
#error "gpuprof/counters.hpp needs the gpuprof::cupti CMake target (GPUPROF_WITH_CUPTI=1)"
#endif
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config.hpp"
#include "counter_data.hpp"
#include "detail/counter_config.hpp"
#include "detail/counter_contribution.hpp"
#include "detail/counter_groups.hpp"
#include "detail/counter_gpu_hold.hpp"
#include "detail/range_profiler.hpp"
#include "detail/recorder.hpp"
#include "device_ceilings.hpp"
#include "diagnostics.hpp"
#include "error.hpp"
#include "profiler.hpp"
#include "roofline.hpp"

GPUPROF_NAMESPACE_BEGIN

// The default metric set for a chip ("GH100", "GA100"): time, DRAM
// traffic, L2 hit rate, FLOPs per pipe, throughput as % of peak and achieved
// occupancy. The throughputs cost most of its passes (13 on GH100; without
// them, 5).
inline std::vector<std::string> default_counter_metrics(const std::string& chip) {
  std::vector<std::string> metrics = {metric::duration_ns,
                                      metric::dram_bytes_read,
                                      metric::dram_bytes_written,
                                      metric::l2_hit_rate_pct,
                                      metric::sm_throughput_pct,
                                      metric::memory_throughput_pct,
                                      metric::achieved_occupancy_pct,
                                      metric::fp32_ffma,
                                      metric::fp32_fadd,
                                      metric::fp32_fmul,
                                      metric::tensor_bf16_ops,
                                      metric::tensor_tf32_ops};
  if (chip.compare(0, 2, "GA") == 0) {
    metrics.push_back(metric::tensor_fp16_dst_fp16_ops);
    metrics.push_back(metric::tensor_fp16_dst_fp32_ops);
  } else {
    metrics.push_back(metric::tensor_fp16_ops);
  }
  return metrics;
}

enum class CounterRanges { scopes, kernels };

// How kernel ranges are replayed: `kernel`, CUPTI replays each kernel
// (collect()); `user`, measure(work) runs the work once per pass. Scope
// ranges are always replayed by measure().
enum class CounterReplay { kernel, user };

struct CounterCaptureOptions {
  std::vector<std::string> metrics;  // empty: default_counter_metrics() of the GPU's chip
  CounterRanges ranges = CounterRanges::scopes;
  CounterReplay replay = CounterReplay::kernel;  // kernels mode only
  int nesting_levels = 3;                        // scope depth measured (scopes mode)
  // Ranges per run of the work (measure()) or per collect(): scopes beyond it
  // are not measured, and the set's note says how many.
  std::size_t max_ranges = 512;
  // The roofs the report's roofline uses. Empty: the data sheet's for the
  // GPU found (tabled_ceilings, device_ceilings.hpp). Set: these, with
  // source "user" unless it names another ("measured").
  RooflineCeilings ceilings;
};

// Replay passes a metric set needs on a chip ("GH100", "GA100"), without a
// GPU. Throws gpuprof::Error naming an unknown metric.
inline int counter_passes(const std::string& chip, const std::vector<std::string>& metrics) {
  return detail::CounterHost(chip, metrics).passes();
}

// When counters cannot be read (no profiling permission, an unsupported GPU,
// a metric this GPU lacks, another profiler holding the counters), active()
// is false, one message on stderr says why, measure()/collect() return an
// empty set whose note says why (and reports show it), and scopes keep
// timing. One capture at a time: CUPTI has one range profiler per context.
class CounterCapture final : public ScopeObserver {
 public:
  explicit CounterCapture(CounterCaptureOptions options = {}) : options_(std::move(options)) {
    result_.metrics = options_.metrics;
    try {
      open();
    } catch (const std::exception& error) {
      close();
      why_inactive_ = error.what();
    }
    if (!why_inactive_.empty())
      diagnose(Severity::note, "hardware counters are off: " + why_inactive_ + ". Scopes still time.");
    // For its whole life, so that every report() holds its last measurement.
    try {
      profiler().add_observer(this);
      registered_ = true;
    } catch (const std::exception& error) {
      diagnose(Severity::warning, std::string("counter capture cannot add to reports: ") + error.what());
    }
  }
  ~CounterCapture() override {
    if (registered_) profiler().remove_observer(this);
    if (session_.running()) {
      try {
        session_.stop_pass();
      } catch (const std::exception& error) {
        diagnose(Severity::note, std::string("counter capture could not stop at exit: ") + error.what());
      }
    }
    close();
  }
  CounterCapture(const CounterCapture&) = delete;
  CounterCapture& operator=(const CounterCapture&) = delete;

  bool active() const { return why_inactive_.empty(); }
  const std::string& why_inactive() const { return why_inactive_; }
  const std::string& chip() const { return result_.chip; }
  // Passes the metric set needs (per nesting level in scopes mode), the
  // duration's own among them (detail/counter_groups.hpp).
  int passes() const { return passes_; }
  // The roofs each report gets: CounterCaptureOptions::ceilings, or the
  // table's for this GPU (none, with source saying why, for one not in it).
  RooflineCeilings ceilings() const { return contribution_.ceilings(); }

  // Runs `work` once per replay pass. Scopes mode: a range per scope it
  // opens (inside a range named `outer` around the whole work, when given:
  // paths are then "outer/scope"), one CounterRange per range in
  // CounterSet::scopes. Kernels mode with CounterReplay::user: one
  // CounterRange per kernel launch of one run of the work, in launch order,
  // in CounterSet::kernels (`outer` is not used). Values are those of one run
  // of the work. Throws gpuprof::Error when CUPTI or `work` fails mid-way
  // (the capture is off afterwards).
  // The set also goes to every later report() (its scopes merged by path),
  // until the next measure() or collect() replaces it; Profiler::reset()
  // keeps it, since it describes one run of the work, not a time span.
  CounterSet measure(const std::function<void()>& work, const std::string& outer = "") {
    CounterSet set = empty_result();
    if (!active()) {
      contribution_.keep(set);
      return set;
    }
    const bool scopes = options_.ranges == CounterRanges::scopes;
    if (!scopes && options_.replay != CounterReplay::user)
      detail::throw_error("CounterCapture::measure() needs CounterRanges::scopes or CounterReplay::user",
                          __FILE__, __LINE__);
    thread_.store(std::this_thread::get_id(), std::memory_order_relaxed);
    int runs = 0;
    std::vector<std::vector<CounterRange>> measured(session_.groups());
    if (scopes) following_.store(true, std::memory_order_release);
    try {
      // The enabled group first: one switch of metric set per measure().
      const std::size_t first = session_.enabled_group();
      for (std::size_t step = 0; step < measured.size(); ++step) {
        const std::size_t group = (first + step) % measured.size();
        if (group != session_.enabled_group()) session_.enable(group, options_.max_ranges);
        measured[group] = run_passes(work, outer, runs, set.note);
      }
      (scopes ? set.scopes : set.kernels) = detail::join_metric_groups(measured, options_.metrics);
    } catch (const std::exception& error) {
      following_.store(false, std::memory_order_release);
      fail_and_close(error.what());
      throw;
    }
    following_.store(false, std::memory_order_release);
    set.passes = runs;
    contribution_.keep(set);
    return set;
  }

  // Kernels mode with CounterReplay::kernel: every kernel launched since
  // construction (or the last collect()), one CounterRange each; the capture
  // goes on afterwards.
  // The set goes to later reports as measure()'s does.
  CounterSet collect() {
    CounterSet set = empty_result();
    if (!active()) {
      contribution_.keep(set);
      return set;
    }
    if (options_.ranges != CounterRanges::kernels || options_.replay != CounterReplay::kernel)
      detail::throw_error("CounterCapture::collect() needs CounterRanges::kernels and CounterReplay::kernel",
                          __FILE__, __LINE__);
    try {
      session_.stop_pass();
      set.passes = session_.passes();
      set.kernels = session_.decode(set.note);
      session_.start_pass();
    } catch (const std::exception& error) {
      fail_and_close(error.what());
      throw;
    }
    contribution_.keep(set);
    return set;
  }

  // ScopeObserver: while measure() runs in scopes mode, a range per scope of
  // the measuring thread, by its name, down to nesting_levels. A scope inside
  // one that got no range gets none either, so CUPTI's nesting stays the
  // scopes' own; below a scope refused by max_ranges it is counted as refused too.
  void on_scope_begin(std::uint64_t instance_id) override {
    if (!following_.load(std::memory_order_acquire) ||
        std::this_thread::get_id() != thread_.load(std::memory_order_relaxed) || !session_.running())
      return;
    detail::ThreadState* thread = detail::this_thread_state;
    if (!thread) return;
    const int level = outer_levels_ + static_cast<int>(open_scopes_.size()) + 1;
    bool pushed = false;
    if (level <= options_.nesting_levels) {
      if (open_scopes_.empty() || open_scopes_.back().pushed) {
        detail::Recorder& recorder = detail::recorder();
        pushed = session_.push_range(recorder.names().text(recorder.node_name(thread->current.load())));
      } else {
        session_.refuse_range();
      }
    }
    open_scopes_.push_back({instance_id, pushed});
  }
  void on_scope_end(std::uint64_t instance_id) override {
    // Scopes nest on a thread, so the one ending is the last opened; one
    // opened before measure() began was never recorded.
    if (std::this_thread::get_id() != thread_.load(std::memory_order_relaxed) || open_scopes_.empty() ||
        open_scopes_.back().instance_id != instance_id)
      return;
    const bool pushed = open_scopes_.back().pushed;
    open_scopes_.pop_back();
    if (!pushed) return;
    try {
      session_.pop_range();
      hold_.release();
    } catch (const std::exception& error) {  // a scope's end must not throw
      diagnose(Severity::note, std::string("counter capture: ") + error.what());
    }
  }
  void contribute(Report& report) override { contribution_.add_to(report); }

 private:
  // Every pass the enabled metric group needs, the work once per pass.
  std::vector<CounterRange> run_passes(const std::function<void()>& work, const std::string& outer, int& runs,
                                       std::string& note) {
    const bool scopes = options_.ranges == CounterRanges::scopes;
    const int limit = session_.passes() * (scopes ? options_.nesting_levels : 1) + 1;
    configure();
    bool submitted = false;
    for (int group_runs = 1; !submitted; ++group_runs, ++runs) {
      if (group_runs > limit)
        detail::throw_error("CUPTI asked for more replay passes than the metric set needs", __FILE__,
                            __LINE__);
      session_.start_pass();
      if (scopes) hold_.hold();
      const bool outer_pushed = scopes && !outer.empty() && session_.push_range(outer);
      outer_levels_ = outer_pushed ? 1 : 0;
      work();
      if (outer_pushed) session_.pop_range();
      hold_.release();
      submitted = session_.stop_pass();
    }
    return session_.decode(note);
  }

  CounterSet empty_result() const {
    CounterSet set;
    set.metrics = result_.metrics;
    set.chip = result_.chip;
    set.note = why_inactive_;
    return set;
  }

  void open() {
    if (options_.nesting_levels < 1)
      detail::throw_error("nesting_levels must be at least 1", __FILE__, __LINE__);
    result_.chip = session_.open_device();
    resolve_ceilings();
    if (options_.metrics.empty()) options_.metrics = default_counter_metrics(result_.chip);
    result_.metrics = options_.metrics;
    // Measured one after the other (counter_groups.hpp); each group's host is built once, here.
    session_.prepare(result_.chip, detail::counter_metric_groups(options_.metrics,
                                                                 options_.ranges == CounterRanges::scopes));
    passes_ = session_.total_passes();
    session_.enable(0, options_.max_ranges);
    if (options_.ranges == CounterRanges::scopes) hold_.load();
    if (options_.ranges == CounterRanges::kernels && options_.replay == CounterReplay::kernel) {
      configure();
      session_.start_pass();
    }
  }

  // The caller's roofs, or the data sheet's for the device the session opened.
  void resolve_ceilings() {
    RooflineCeilings ceilings = options_.ceilings;
    if (ceilings.empty()) {
      int device = 0;
      GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
      cudaDeviceProp properties{};
      GPUPROF_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
      ceilings = tabled_ceilings(properties.name, properties.major, properties.minor);
    } else if (ceilings.source.empty()) {
      ceilings.source = "user";
    }
    contribution_.set_ceilings(ceilings);
  }

  // The config for the next passes; a measure() starts again at pass 0.
  void configure() {
    session_.configure(options_.ranges == CounterRanges::scopes, options_.replay == CounterReplay::user,
                       options_.nesting_levels);
  }

  // A pass cut short leaves CUPTI's ranges unbalanced: the capture ends,
  // and reports show why instead of an older set.
  void fail_and_close(const std::string& why) {
    why_inactive_ = "collection stopped: " + why;
    close();
    contribution_.keep(empty_result());
  }
  void close() noexcept {
    open_scopes_.clear();
    hold_.close();
    session_.close();
  }

  CounterCaptureOptions options_;
  CounterSet result_;  // chip and metrics, for every set handed out
  std::string why_inactive_;
  detail::RangeProfilerSession session_;
  int passes_ = 0;        // all groups' passes per nesting level
  detail::GpuHold hold_;  // scopes mode: each pass's hold kernel
  detail::CounterContribution contribution_;
  bool registered_ = false;  // an observer of the profiler, for contribute()
  // Whose scopes push ranges: the thread in measure() (scopes mode), read by
  // every thread's scopes.
  std::atomic<bool> following_{false};
  std::atomic<std::thread::id> thread_{};
  struct OpenScope {
    std::uint64_t instance_id;
    bool pushed;  // has a CUPTI range to pop
  };
  std::vector<OpenScope> open_scopes_;  // the measuring thread's scopes opened in this run, innermost last
  int outer_levels_ = 0;                // 1 while measure()'s `outer` range is pushed
};

// For BenchOptions::counters: each bench() call measures fn's scopes with a
// fresh CounterCapture, inside a range named `outer` ("bench/forward").
inline std::function<CounterSet(const std::function<void()>&)> counter_replay(
    CounterCaptureOptions options = {}, std::string outer = "bench") {
  return [options, outer](const std::function<void()>& fn) {
    CounterCapture capture(options);
    return capture.measure(fn, outer);
  };
}

GPUPROF_NAMESPACE_END
