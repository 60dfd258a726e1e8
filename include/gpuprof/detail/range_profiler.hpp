// gpuprof/detail/range_profiler.hpp: one CUPTI Range Profiler session on the
// current device: the profiler's set-up and teardown, the counter data
// image, each pass's start and stop, user ranges (bounded by max_ranges) and
// the decoding of what the passes collected. The session builds the host
// evaluator of each metric group once, when it is prepared, and keeps it
// until it closes; enabling a group uses that group's. CounterCapture
// (counters.hpp) decides which passes run and when.
#pragma once
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../counter_data.hpp"
#include "../error.hpp"
#include "counter_config.hpp"
#include "counter_decode.hpp"
#include "cupti_check.hpp"
#include "cupti_params.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class RangeProfilerSession {
 public:
  RangeProfilerSession() = default;
  ~RangeProfilerSession() { close(); }
  RangeProfilerSession(const RangeProfilerSession&) = delete;
  RangeProfilerSession& operator=(const RangeProfilerSession&) = delete;

  // Initializes the profiler on the current device and returns its chip
  // ("GH100"). gpuprof::Error when the device cannot profile.
  std::string open_device() {
    context_ = current_context();
    int device = 0;
    GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
    auto init = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    GPUPROF_CUPTI_CHECK(cuptiProfilerInitialize(&init));
    initialized_ = true;

    auto support = cupti_params<CUpti_Profiler_DeviceSupported_Params>(
        CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    support.cuDevice = device;
    support.api = CUPTI_PROFILER_RANGE_PROFILING;
    GPUPROF_CUPTI_CHECK(cuptiProfilerDeviceSupported(&support));
    if (support.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      throw Error(
          "this GPU or its configuration (vGPU, confidential computing, WSL, ...) does not support counter "
          "profiling");

    auto chip = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(device);
    GPUPROF_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
    return chip.pChipName;
  }

  // Checks every metric group against the counters this context can read
  // and builds each group's host evaluator (config image, pass count), kept
  // until close(). Call after open_device() and before enable().
  void prepare(const std::string& chip, const std::vector<std::vector<std::string>>& groups) {
    disable();
    hosts_.clear();
    auto available = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
        CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
    available.ctx = context_;
    check_permission(cuptiProfilerGetCounterAvailability(&available), "cuptiProfilerGetCounterAvailability");
    std::vector<std::uint8_t> availability(available.counterAvailabilityImageSize);
    available.pCounterAvailabilityImage = availability.data();
    GPUPROF_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&available));
    for (const std::vector<std::string>& metrics : groups)
      hosts_.push_back(std::make_unique<CounterHost>(chip, metrics, availability));
  }

  // Enables the range profiler for prepared group `group` and sizes the
  // counter data for max_ranges ranges. Enabling again (another group)
  // disables the previous one first.
  void enable(std::size_t group, std::size_t max_ranges) {
    if (group >= hosts_.size()) throw_error("metric group not prepared", __FILE__, __LINE__);
    disable();
    max_ranges_ = max_ranges;
    host_ = hosts_[group].get();
    enabled_group_ = group;

    auto enable =
        cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    enable.ctx = context_;
    check_permission(cuptiRangeProfilerEnable(&enable), "cuptiRangeProfilerEnable");
    object_ = enable.pRangeProfilerObject;

    auto size = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pRangeProfilerObject = object_;
    size.pMetricNames = const_cast<const char**>(host_->metric_names().data());
    size.numMetrics = host_->metric_names().size();
    size.maxNumOfRanges = max_ranges_;
    size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges_);
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data_.resize(size.counterDataSize);
    reset_counter_data();
  }

  // Passes the enabled group needs (per nesting level with user ranges); 0 when none is.
  int passes() const { return host_ ? host_->passes() : 0; }
  // Passes all prepared groups need together.
  int total_passes() const {
    int passes = 0;
    for (const std::unique_ptr<CounterHost>& host : hosts_) passes += host->passes();
    return passes;
  }
  std::size_t groups() const { return hosts_.size(); }
  std::size_t enabled_group() const { return enabled_group_; }
  bool running() const { return running_; }

  // The config for the next passes; a measurement starts again at pass 0.
  // User ranges (scopes) always replay by the user; auto ranges (kernels)
  // by the user or kernel by kernel.
  void configure(bool user_ranges, bool user_replay, int nesting_levels) {
    auto config =
        cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
    config.pRangeProfilerObject = object_;
    config.configSize = host_->config().size();
    config.pConfig = host_->config().data();
    config.counterDataImageSize = counter_data_.size();
    config.pCounterDataImage = counter_data_.data();
    config.range = user_ranges ? CUPTI_UserRange : CUPTI_AutoRange;
    config.replayMode = user_ranges || user_replay ? CUPTI_UserReplay : CUPTI_KernelReplay;
    config.maxRangesPerPass = max_ranges_;
    config.numNestingLevels = static_cast<std::uint16_t>(user_ranges ? nesting_levels : 1);
    config.minNestingLevel = 1;
    config.passIndex = 0;
    config.targetNestingLevel = 1;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerSetConfig(&config));
  }

  void start_pass() {
    auto start = cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerStart(&start));
    running_ = true;
    ranges_this_pass_ = 0;
    ranges_refused_ = 0;
  }
  // True once every pass the metric set needs was submitted.
  bool stop_pass() {
    running_ = false;
    auto stop = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerStop(&stop));
    return stop.isAllPassSubmitted != 0;
  }

  // False, and the range counted as refused, once this run of the work has
  // pushed max_ranges ranges: CUPTI's counter data was sized for that many,
  // and a large-model train step that pushed more (about 590 against 512)
  // crashed inside CUPTI instead of dropping them.
  bool push_range(const std::string& name) {
    if (ranges_this_pass_ >= max_ranges_) {
      refuse_range();
      return false;
    }
    auto push =
        cupti_params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
    push.pRangeProfilerObject = object_;
    push.pRangeName = name.c_str();
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerPushRange(&push));
    ++ranges_this_pass_;
    return true;
  }
  void pop_range() {
    auto pop =
        cupti_params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
    pop.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerPopRange(&pop));
  }
  // A scope left unmeasured because of max_ranges (itself or one around it).
  void refuse_range() { ++ranges_refused_; }

  // The ranges the passes collected; `note` says how many were refused or
  // dropped. The counter data is ready for the next measurement afterwards.
  std::vector<CounterRange> decode(std::string& note) {
    auto decode = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    decode.pRangeProfilerObject = object_;
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
    if (ranges_refused_ > 0)
      note = std::to_string(ranges_refused_) + " scope range(s) not measured: more than max_ranges (" +
             std::to_string(max_ranges_) + ") in one run of the work";
    else if (decode.numOfRangeDropped)
      note = std::to_string(decode.numOfRangeDropped) + " range(s) dropped: more than max_ranges (" +
             std::to_string(max_ranges_) + ")";
    std::vector<CounterRange> ranges = decode_counter_ranges(*host_, counter_data_);
    reset_counter_data();
    return ranges;
  }

  void close() noexcept {
    disable();
    hosts_.clear();
    if (initialized_) {
      auto params =
          cupti_params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      (void)cuptiProfilerDeInitialize(&params);
      initialized_ = false;
    }
  }

 private:
  void disable() noexcept {
    host_ = nullptr;
    if (!object_) return;
    auto disable =
        cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    disable.pRangeProfilerObject = object_;
    (void)cuptiRangeProfilerDisable(&disable);  // nothing to do about a failure: the next enable says
    object_ = nullptr;
  }

  static CUcontext current_context() {
    GPUPROF_CUDA_CHECK(cudaFree(nullptr));  // makes the primary context current
    using GetCurrent = CUresult (*)(CUcontext*);
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GPUPROF_CUDA_CHECK(
        cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !function)
      throw_error("cuCtxGetCurrent not found in the driver", __FILE__, __LINE__);
    CUcontext context = nullptr;
    if (reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS || !context)
      throw_error("no current CUDA context", __FILE__, __LINE__);
    return context;
  }

  static void check_permission(CUptiResult status, const char* call) {
    if (status == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
      throw Error(
          "no permission to read GPU performance counters (run as root, or load the nvidia module with "
          "NVreg_RestrictProfilingToAdminUsers=0)");
    check_cupti(status, call, __FILE__, __LINE__);
  }

  void reset_counter_data() {
    auto init = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    init.pRangeProfilerObject = object_;
    init.counterDataSize = counter_data_.size();
    init.pCounterData = counter_data_.data();
    GPUPROF_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
  }

  CUcontext context_ = nullptr;
  bool initialized_ = false;
  bool running_ = false;
  CUpti_RangeProfiler_Object* object_ = nullptr;
  std::vector<std::unique_ptr<CounterHost>> hosts_;  // one per metric group, from prepare()
  const CounterHost* host_ = nullptr;                // the enabled group's
  std::size_t enabled_group_ = 0;
  std::vector<std::uint8_t> counter_data_;
  std::size_t max_ranges_ = 0;
  std::size_t ranges_this_pass_ = 0;  // pushed in this run of the work
  std::size_t ranges_refused_ = 0;    // beyond max_ranges in this run
};

}  // namespace detail
GPUPROF_NAMESPACE_END
