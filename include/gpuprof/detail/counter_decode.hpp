// gpuprof/detail/counter_decode.hpp: a decoded counter data image read back
// as CounterRanges: every range, named by its path, with each metric's value
// evaluated by the chip's host object (counter_config.hpp).
#pragma once
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include <cstdint>
#include <vector>

#include "../config.hpp"
#include "../counter_data.hpp"
#include "counter_config.hpp"
#include "cupti_check.hpp"
#include "cupti_params.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

inline std::vector<CounterRange> decode_counter_ranges(const CounterHost& host,
                                                       const std::vector<std::uint8_t>& data) {
  auto info = detail::cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  GPUPROF_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
  std::vector<CounterRange> out;
  const std::vector<const char*>& names = host.metric_names();
  std::vector<double> values(names.size());
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
    eval.pHostObject = host.host_object();
    eval.pCounterDataImage = data.data();
    eval.counterDataImageSize = data.size();
    eval.rangeIndex = index;
    eval.ppMetricNames = const_cast<const char**>(names.data());
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    GPUPROF_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
    CounterRange entry;
    entry.name = range.rangeName ? range.rangeName : "";
    for (std::size_t m = 0; m < names.size(); ++m) entry.values.push_back({host.metrics()[m], values[m]});
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
