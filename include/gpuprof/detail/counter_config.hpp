// gpuprof/detail/counter_config.hpp: CUPTI's host-side metric evaluator for
// one chip: checks metric names, builds the config image and says how many
// replay passes it needs. Works without a GPU when the chip is named
// ("GH100", "GA100").
#pragma once
#include <cupti_profiler_host.h>

#include <cstdint>
#include <string>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "cupti_check.hpp"
#include "cupti_params.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

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
  CUpti_Profiler_Host_Object* host_object() const { return host_; }
  const std::vector<std::string>& metrics() const { return metrics_; }

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
GPUPROF_NAMESPACE_END
