// gpuprof/counters.hpp: hardware counters (Nsight Compute metrics) per
// gpuprof scope or per kernel, through CUPTI's Range Profiler. Needs the
// gpuprof::cupti CMake target.
//
// ```cpp
// #include <gpuprof/counters.hpp>
// #include <functional>
// void measure(const std::function<void()>& forward, const std::function<void()>& train_step) {
//   gpuprof::CounterCapture counters;  // default metrics, one range per scope
//   gpuprof::CounterSet per_scope = counters.measure([&] {
//     GPUPROF_SCOPE("forward");
//     forward();
//   });  // runs the work once per replay pass
//
//   gpuprof::CounterCaptureOptions per_kernel;
//   per_kernel.ranges = gpuprof::CounterRanges::kernels;
//   {
//     gpuprof::CounterCapture kernels(per_kernel);  // every kernel from here on
//     forward();
//     gpuprof::CounterSet replayed = kernels.collect();
//   }
//   per_kernel.replay = gpuprof::CounterReplay::user;
//   gpuprof::CounterCapture step_kernels(per_kernel);
//   gpuprof::CounterSet in_program_order = step_kernels.measure(train_step);
// }
// ```
//
// Scope ranges use user ranges and user replay: a metric set that needs more
// counters than one run can read takes several passes, and each pass runs
// the whole work again, so the work must give the same GPU work each time
// (a benchmark step does). Each scope that opens on the measuring thread
// while measure() runs, down to `nesting_levels` deep, pushes a range named
// after it (each level is measured in its own passes; ranges are named by
// their path, "step/forward"). Deeper scopes push none: CUPTI would not
// measure them, and they would count against max_ranges. A range's push and
// pop are commands in the GPU's stream order, so its duration is the GPU's
// time from one to the other, as CUDA events around the scope would read it:
// time the GPU waits for the host inside the scope counts (a host
// synchronisation, a sleep, launches slower than the kernels). Each pass
// holds the GPU in a waiting kernel until the host has pushed its first
// scope whole (or for 10 ms at most), so that CUPTI's slow first launches of
// a pass, which the host makes while the GPU has nothing queued, are not
// charged to that scope (docs/counters.md). Kernel
// ranges use auto ranges and kernel replay: CUPTI saves and restores the
// memory a kernel touches and replays each kernel itself, so any program
// works, at the cost of serializing kernels — and each replayed kernel finds
// the L2 as the save/restore left it, not as the kernels before it left it.
// Kernel ranges with CounterReplay::user instead run the work once per pass
// (measure()), like scope ranges: every kernel then sees the cache state of
// the program itself, as `ncu --replay-mode application --cache-control
// none` does.
//
// When counters cannot be read (no profiling permission, an unsupported GPU,
// a metric this GPU lacks, another profiler holding the counters), active()
// is false, one message on stderr says why, measure()/collect() return an
// empty set whose note says why, and scopes keep timing.
#pragma once
#if !GPUPROF_WITH_CUPTI
#error "gpuprof/counters.hpp needs the gpuprof::cupti CMake target (GPUPROF_WITH_CUPTI=1)"
#endif
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config.hpp"
#include "diagnostics.hpp"
#include "counter_data.hpp"
#include "detail/cupti_check.hpp"
#include "detail/recorder.hpp"
#include "error.hpp"
#include "profiler.hpp"

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
};

namespace detail {

// A CUPTI parameter block: zeroed, with its size set (CUPTI's versioning).
template <class Params>
Params cupti_params(std::size_t size) {
  Params params{};
  params.structSize = size;
  return params;
}

// CUPTI's host-side metric evaluator for one chip: checks metric names,
// builds the config image and says how many passes it needs. Works without
// a GPU when the chip is named ("GH100", "GA100").
class CounterHost {
 public:
  CounterHost(const std::string& chip, const std::vector<std::string>& metrics,
              const std::vector<std::uint8_t>& availability = {})
      : metrics_(metrics) {
    auto init = detail::cupti_params<CUpti_Profiler_Host_Initialize_Params>(
        CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    init.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    GPUPROF_CUPTI_CHECK(cuptiProfilerHostInitialize(&init));
    host_ = init.pHostObject;
    try {
      for (const std::string& name : metrics_) names_.push_back(name.c_str());
      // One by one first, so an unknown name is named in the error.
      for (const char* name : names_) {
        auto props = detail::cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(
            CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
        props.pHostObject = host_;
        props.pMetricName = name;
        if (cuptiProfilerHostGetMetricProperties(&props) != CUPTI_SUCCESS)
          throw Error("metric \"" + std::string(name) + "\" is not known on " + chip);
      }
      auto add = detail::cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
          CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
      add.pHostObject = host_;
      add.ppMetricNames = names_.data();
      add.numMetrics = names_.size();
      GPUPROF_CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics(&add));
      auto size = detail::cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
          CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
      size.pHostObject = host_;
      GPUPROF_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
      config_.resize(size.configImageSize);
      auto image = detail::cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
          CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
      image.pHostObject = host_;
      image.configImageSize = config_.size();
      image.pConfigImage = config_.data();
      GPUPROF_CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&image));
      auto passes = detail::cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
          CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
      passes.configImageSize = config_.size();
      passes.pConfigImage = config_.data();
      GPUPROF_CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&passes));
      passes_ = static_cast<int>(passes.numOfPasses);
    } catch (...) {
      deinitialize();
      throw;
    }
  }
  ~CounterHost() { deinitialize(); }
  CounterHost(const CounterHost&) = delete;
  CounterHost& operator=(const CounterHost&) = delete;

  int passes() const { return passes_; }
  const std::vector<std::uint8_t>& config() const { return config_; }
  const std::vector<const char*>& metric_names() const { return names_; }

  // Every range of a decoded counter data image, named by its path.
  std::vector<CounterRange> ranges(const std::vector<std::uint8_t>& data) const {
    auto info = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info.pCounterDataImage = data.data();
    info.counterDataImageSize = data.size();
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
    std::vector<CounterRange> out;
    std::vector<double> values(names_.size());
    for (std::size_t index = 0; index < info.numTotalRanges; ++index) {
      auto range = detail::cupti_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
          CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
      range.pCounterDataImage = data.data();
      range.counterDataImageSize = data.size();
      range.rangeIndex = index;
      range.rangeDelimiter = "/";
      GPUPROF_CUPTI_CHECK(cuptiRangeProfilerCounterDataGetRangeInfo(&range));
      auto eval = detail::cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
      eval.pHostObject = host_;
      eval.pCounterDataImage = data.data();
      eval.counterDataImageSize = data.size();
      eval.rangeIndex = index;
      eval.ppMetricNames = const_cast<const char**>(names_.data());
      eval.numMetrics = names_.size();
      eval.pMetricValues = values.data();
      GPUPROF_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
      CounterRange entry;
      entry.name = range.rangeName ? range.rangeName : "";
      for (std::size_t m = 0; m < names_.size(); ++m) entry.values.push_back({metrics_[m], values[m]});
      out.push_back(std::move(entry));
    }
    return out;
  }

 private:
  void deinitialize() noexcept {
    if (!host_) return;
    auto params = detail::cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    params.pHostObject = host_;
    (void)cuptiProfilerHostDeinitialize(&params);  // nothing to do about a failure at teardown
    host_ = nullptr;
  }

  std::vector<std::string> metrics_;
  std::vector<const char*> names_;
  CUpti_Profiler_Host_Object* host_ = nullptr;
  std::vector<std::uint8_t> config_;
  int passes_ = 0;
};

}  // namespace detail

// Replay passes a metric set needs on a chip ("GH100", "GA100"), without a
// GPU. Throws gpuprof::Error naming an unknown metric.
inline int counter_passes(const std::string& chip, const std::vector<std::string>& metrics) {
  return detail::CounterHost(chip, metrics).passes();
}

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
  }
  ~CounterCapture() override {
    if (running_) {
      try {
        stop_pass();
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
  // Passes the metric set needs (per nesting level in scopes mode).
  int passes() const { return host_ ? host_->passes() : 0; }

  // Runs `work` once per replay pass. Scopes mode: a range per scope it
  // opens (inside a range named `outer` around the whole work, when given:
  // paths are then "outer/scope"), one CounterRange per range in
  // CounterSet::scopes. Kernels mode with CounterReplay::user: one
  // CounterRange per kernel launch of one run of the work, in launch order,
  // in CounterSet::kernels (`outer` is not used). Values are those of one run
  // of the work. Throws gpuprof::Error when CUPTI or `work` fails mid-way
  // (the capture is off afterwards).
  CounterSet measure(const std::function<void()>& work, const std::string& outer = "") {
    CounterSet set = empty_result();
    if (!active()) return set;
    const bool scopes = options_.ranges == CounterRanges::scopes;
    if (!scopes && options_.replay != CounterReplay::user)
      detail::throw_error("CounterCapture::measure() needs CounterRanges::scopes or CounterReplay::user",
                          __FILE__, __LINE__);
    thread_ = std::this_thread::get_id();
    const int limit = host_->passes() * (scopes ? options_.nesting_levels : 1) + 1;
    int runs = 0;
    bool submitted = false;
    if (scopes) profiler().add_observer(this);
    try {
      configure();
      while (!submitted) {
        if (++runs > limit)
          detail::throw_error("CUPTI asked for more replay passes than the metric set needs", __FILE__,
                              __LINE__);
        start_pass();
        if (scopes) hold_gpu();
        const bool outer_pushed = scopes && !outer.empty() && push_range(outer);
        outer_levels_ = outer_pushed ? 1 : 0;
        work();
        if (outer_pushed) pop_range();
        release_gpu();
        submitted = stop_pass();
      }
    } catch (const std::exception& error) {
      if (scopes) profiler().remove_observer(this);
      fail_and_close(error.what());
      throw;
    }
    if (scopes) profiler().remove_observer(this);
    set.passes = runs;
    (scopes ? set.scopes : set.kernels) = decode(set.note);
    return set;
  }

  // Kernels mode with CounterReplay::kernel: every kernel launched since
  // construction (or the last collect()), one CounterRange each; the capture
  // goes on afterwards.
  CounterSet collect() {
    CounterSet set = empty_result();
    if (!active()) return set;
    if (options_.ranges != CounterRanges::kernels || options_.replay != CounterReplay::kernel)
      detail::throw_error("CounterCapture::collect() needs CounterRanges::kernels and CounterReplay::kernel",
                          __FILE__, __LINE__);
    try {
      stop_pass();
      set.passes = host_->passes();
      set.kernels = decode(set.note);
      start_pass();
    } catch (const std::exception& error) {
      fail_and_close(error.what());
      throw;
    }
    return set;
  }

  // ScopeObserver: a range per scope of the measuring thread, by its name,
  // down to nesting_levels. A scope inside one that got no range gets none
  // either, so CUPTI's nesting stays the scopes' own; below a scope refused
  // by max_ranges it is counted as refused too.
  void on_scope_begin(std::uint64_t instance_id) override {
    if (!running_ || std::this_thread::get_id() != thread_) return;
    detail::ThreadState* thread = detail::this_thread_state;
    if (!thread) return;
    const int level = outer_levels_ + static_cast<int>(open_scopes_.size()) + 1;
    bool pushed = false;
    if (level <= options_.nesting_levels) {
      if (open_scopes_.empty() || open_scopes_.back().pushed) {
        detail::Recorder& recorder = detail::recorder();
        pushed = push_range(recorder.names().text(recorder.node_name(thread->current.load())));
      } else {
        ++ranges_refused_;
      }
    }
    open_scopes_.push_back({instance_id, pushed});
  }
  void on_scope_end(std::uint64_t instance_id) override {
    // Scopes nest on a thread, so the one ending is the last opened; one
    // opened before measure() began was never recorded.
    if (std::this_thread::get_id() != thread_ || open_scopes_.empty() ||
        open_scopes_.back().instance_id != instance_id)
      return;
    const bool pushed = open_scopes_.back().pushed;
    open_scopes_.pop_back();
    if (!pushed) return;
    try {
      pop_range();
      release_gpu();
    } catch (const std::exception& error) {  // a scope's end must not throw
      diagnose(Severity::note, std::string("counter capture: ") + error.what());
    }
  }
  void contribute(Report&) override {}

 private:
  CounterSet empty_result() const {
    CounterSet set;
    set.metrics = result_.metrics;
    set.chip = result_.chip;
    set.note = why_inactive_;
    return set;
  }

  static CUcontext current_context() {
    GPUPROF_CUDA_CHECK(cudaFree(nullptr));  // makes the primary context current
    using GetCurrent = CUresult (*)(CUcontext*);
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GPUPROF_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !function)
      detail::throw_error("cuCtxGetCurrent not found in the driver", __FILE__, __LINE__);
    CUcontext context = nullptr;
    if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS || !context)
      detail::throw_error("no current CUDA context", __FILE__, __LINE__);
    return context;
  }

  static void check_permission(CUptiResult status, const char* call) {
    if (status == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
      throw Error(
          "no permission to read GPU performance counters (run as root, or load the nvidia module with "
          "NVreg_RestrictProfilingToAdminUsers=0)");
    detail::check_cupti(status, call, __FILE__, __LINE__);
  }

  void open() {
    if (options_.nesting_levels < 1)
      detail::throw_error("nesting_levels must be at least 1", __FILE__, __LINE__);
    context_ = current_context();
    int device = 0;
    GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
    auto init =
        detail::cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    GPUPROF_CUPTI_CHECK(cuptiProfilerInitialize(&init));
    initialized_ = true;

    auto support = detail::cupti_params<CUpti_Profiler_DeviceSupported_Params>(
        CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    support.cuDevice = device;
    support.api = CUPTI_PROFILER_RANGE_PROFILING;
    GPUPROF_CUPTI_CHECK(cuptiProfilerDeviceSupported(&support));
    if (support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      throw Error(
          "this GPU or its configuration (vGPU, confidential computing, WSL, ...) does not support counter "
          "profiling");

    auto chip =
        detail::cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(device);
    GPUPROF_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
    result_.chip = chip.pChipName;
    if (options_.metrics.empty()) options_.metrics = default_counter_metrics(result_.chip);
    result_.metrics = options_.metrics;

    auto available = detail::cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    available.ctx = context_;
    check_permission(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability");
    std::vector<std::uint8_t> availability(available.counterAvailabilityImageSize);
    available.pCounterAvailabilityImage = availability.data();
    GPUPROF_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&available));
    host_.reset(new detail::CounterHost(result_.chip, options_.metrics, availability));

    auto enable = detail::cupti_params<CUpti_RangeProfiler_Enable_Params>(
        CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context_;
    check_permission(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
    object_ = enable.pRangeProfilerObject;

    auto size = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object_;
    size.pMetricNames = const_cast<const char**>(host_->metric_names().data());
    size.numMetrics = host_->metric_names().size();
    size.maxNumOfRanges = options_.max_ranges;
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(options_.max_ranges);
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data_.resize(size.counterDataSize);
    reset_counter_data();

    if (options_.ranges == CounterRanges::scopes) load_hold_kernel();
    if (options_.ranges == CounterRanges::kernels && options_.replay == CounterReplay::kernel) {
      configure();
      start_pass();
    }
  }

  // The config for the next passes; a measure() starts again at pass 0.
  void configure() {
    const bool scopes = options_.ranges == CounterRanges::scopes;
    auto config = detail::cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
        CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    config.pRangeProfilerObject = object_;
    config.configSize = host_->config().size();
    config.pConfig = host_->config().data();
    config.counterDataImageSize = counter_data_.size();
    config.pCounterDataImage = counter_data_.data();
    config.range = scopes ? CUPTI_UserRange : CUPTI_AutoRange;
    config.replayMode =
        scopes || options_.replay == CounterReplay::user ? CUPTI_UserReplay : CUPTI_KernelReplay;
    config.maxRangesPerPass = options_.max_ranges;
    config.numNestingLevels = static_cast<std::uint16_t>(scopes ? options_.nesting_levels : 1);
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerSetConfig(&config));
  }

  void reset_counter_data() {
    auto init = detail::cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = object_;
    init.counterDataSize = counter_data_.size();
    init.pCounterData = counter_data_.data();
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
  }

  // False, and the range counted as refused, once this run of the work has
  // pushed max_ranges ranges: CUPTI's counter data was sized for that many,
  // and a large-model train step that pushed more (about 590 against 512)
  // crashed inside CUPTI instead of dropping them.
  bool push_range(const std::string& name) {
    if (ranges_this_pass_ >= options_.max_ranges) {
      ++ranges_refused_;
      return false;
    }
    auto push = detail::cupti_params<CUpti_RangeProfiler_PushRange_Params>(
        CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = object_;
    push.pRangeName = name.c_str();
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerPushRange(&push));
    ++ranges_this_pass_;
    return true;
  }
  void pop_range() {
    auto pop = detail::cupti_params<CUpti_RangeProfiler_PopRange_Params>(
        CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerPopRange(&pop));
  }

  // The host's first launches of a pass are slow (CUPTI's set-up), and the
  // GPU, idle since the last pass ended, would run the first scope's push at
  // once and wait for them inside that scope's range: its duration read
  // 10-80 us more than its kernels on an H200 (docs/counters.md). So each
  // pass opens with a kernel, outside any range, that waits until the host
  // has pushed and popped the pass's first range (release_gpu()) and only
  // then lets the ranges' commands, queued behind it, run back to back. The
  // timeout bounds the wait for a scope that synchronises with the GPU
  // before it ends (that host call waits for the timeout, once a pass). The
  // kernel is PTX, so that a host compiler builds this header (the driver
  // compiles it for the GPU); the release count sits in mapped host memory.
  static constexpr std::uint64_t hold_timeout_ns = 10'000'000;
  void load_hold_kernel() {
    // Returns once *released >= ticket, or after timeout ns.
    static constexpr char ptx[] =
        ".version 6.3\n.target sm_75\n.address_size 64\n"
        ".visible .entry gpuprof_hold(.param .u64 released, .param .u64 ticket, .param .u64 timeout) {\n"
        "  .reg .pred %p<3>;\n  .reg .b64 %rd<8>;\n"
        "  ld.param.u64 %rd1, [released];\n  ld.param.u64 %rd2, [ticket];\n  ld.param.u64 %rd3, [timeout];\n"
        "  mov.u64 %rd4, %globaltimer;\n"
        "WAIT:\n"
        "  ld.volatile.u64 %rd5, [%rd1];\n  setp.ge.u64 %p1, %rd5, %rd2;\n  @%p1 bra DONE;\n"
        "  mov.u64 %rd6, %globaltimer;\n  sub.u64 %rd7, %rd6, %rd4;\n  setp.lt.u64 %p2, %rd7, %rd3;\n"
        "  @%p2 bra WAIT;\n"
        "DONE:\n  ret;\n}\n";
    GPUPROF_CUDA_CHECK(cudaLibraryLoadData(&hold_library_, ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    GPUPROF_CUDA_CHECK(cudaLibraryGetKernel(&hold_kernel_, hold_library_, "gpuprof_hold"));
    void* released = nullptr;
    GPUPROF_CUDA_CHECK(cudaHostAlloc(&released, sizeof(std::uint64_t), cudaHostAllocMapped));
    released_ = static_cast<volatile std::uint64_t*>(released);
    *released_ = 0;
    GPUPROF_CUDA_CHECK(cudaHostGetDevicePointer(&released_on_gpu_, released, 0));
  }
  // Each hold waits for its own ticket, so the count never goes back.
  void hold_gpu() {
    std::uint64_t ticket = ++holds_;
    std::uint64_t timeout = hold_timeout_ns;
    void* args[] = {&released_on_gpu_, &ticket, &timeout};
    GPUPROF_CUDA_CHECK(
        cudaLaunchKernel(reinterpret_cast<const void*>(hold_kernel_), dim3(1), dim3(1), args, 0, nullptr));
    holding_ = true;
  }
  void release_gpu() noexcept {
    if (!holding_) return;
    *released_ = holds_;
    holding_ = false;
  }

  void start_pass() {
    auto start =
        detail::cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerStart(&start));
    running_ = true;
    ranges_this_pass_ = 0;
    ranges_refused_ = 0;
  }
  // True once every pass the metric set needs was submitted.
  bool stop_pass() {
    running_ = false;
    auto stop =
        detail::cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
    return stop.isAllPassSubmitted != 0;
  }

  std::vector<CounterRange> decode(std::string& note) {
    auto decode = detail::cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
    if (ranges_refused_ > 0)
      note = std::to_string(ranges_refused_) + " scope range(s) not measured: more than max_ranges (" +
             std::to_string(options_.max_ranges) + ") in one run of the work";
    else if (decode.numOfRangeDropped)
      note = std::to_string(decode.numOfRangeDropped) + " range(s) dropped: more than max_ranges (" +
             std::to_string(options_.max_ranges) + ")";
    std::vector<CounterRange> ranges = host_->ranges(counter_data_);
    reset_counter_data();
    return ranges;
  }

  // A pass cut short leaves CUPTI's ranges unbalanced: the capture ends.
  void fail_and_close(const std::string& why) {
    why_inactive_ = "collection stopped: " + why;
    close();
  }
  void close() noexcept {
    open_scopes_.clear();
    host_.reset();
    if (released_) {
      // Teardown: nothing to do about a failure. A pass cut short may leave
      // its hold waiting: released, it ends before the memory goes.
      release_gpu();
      (void)cudaDeviceSynchronize();
      (void)cudaFreeHost(const_cast<std::uint64_t*>(released_));
      released_ = nullptr;
    }
    if (hold_library_) {
      (void)cudaLibraryUnload(hold_library_);
      hold_library_ = nullptr;
    }
    if (object_) {
      auto disable = detail::cupti_params<CUpti_RangeProfiler_Disable_Params>(
          CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
      disable.pRangeProfilerObject = object_;
      (void)cuptiRangeProfilerDisable(&disable);  // teardown: nothing to do about a failure
      object_ = nullptr;
    }
    if (initialized_) {
      auto params = detail::cupti_params<CUpti_Profiler_DeInitialize_Params>(
          CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      (void)cuptiProfilerDeInitialize(&params);
      initialized_ = false;
    }
  }

  CounterCaptureOptions options_;
  CounterSet result_;  // chip and metrics, for every set handed out
  std::string why_inactive_;
  CUcontext context_ = nullptr;
  bool initialized_ = false;
  bool running_ = false;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::unique_ptr<detail::CounterHost> host_;
  std::vector<std::uint8_t> counter_data_;
  cudaLibrary_t hold_library_ = nullptr;  // scopes mode: each pass's hold kernel
  cudaKernel_t hold_kernel_ = nullptr;
  volatile std::uint64_t* released_ = nullptr;  // mapped host memory: the last hold released
  void* released_on_gpu_ = nullptr;
  std::uint64_t holds_ = 0;  // holds launched, the last one's ticket
  bool holding_ = false;
  std::thread::id thread_;
  struct OpenScope {
    std::uint64_t instance_id;
    bool pushed;  // has a CUPTI range to pop
  };
  std::vector<OpenScope> open_scopes_;  // the measuring thread's scopes opened in this run, innermost last
  int outer_levels_ = 0;                // 1 while measure()'s `outer` range is pushed
  std::size_t ranges_this_pass_ = 0;    // pushed in this run of the work
  std::size_t ranges_refused_ = 0;      // beyond max_ranges in this run
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
