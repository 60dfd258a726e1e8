// gpuprof/counter_data.hpp: hardware counter values per scope or per kernel,
// as CounterCapture (counters.hpp) measures them. Plain data with no CUPTI
// dependency, so reports, the roofline and their tests work without a GPU.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

// Nsight Compute metric names of the default set, so reports can find the
// values a roofline needs. Any other ncu metric name may be collected too.
namespace metric {
constexpr const char* duration_ns = "gpu__time_duration.sum";
constexpr const char* dram_bytes_read = "dram__bytes_read.sum";
constexpr const char* dram_bytes_written = "dram__bytes_write.sum";
constexpr const char* l2_hit_rate_pct = "lts__t_sector_hit_rate.pct";
constexpr const char* sm_throughput_pct = "sm__throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* memory_throughput_pct =
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
constexpr const char* achieved_occupancy_pct = "sm__warps_active.avg.pct_of_peak_sustained_active";
// FP32 instructions executed by threads (predicated-on); an FFMA is two FLOPs.
constexpr const char* fp32_ffma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
constexpr const char* fp32_fadd = "sm__sass_thread_inst_executed_op_fadd_pred_on.sum";
constexpr const char* fp32_fmul = "sm__sass_thread_inst_executed_op_fmul_pred_on.sum";
// Tensor-pipe operations by input type (a multiply-add counts two), all MMA
// kinds together (mma.sync and Hopper's wgmma). FP16 inputs have one counter
// on Hopper and one per accumulator type on Ampere.
constexpr const char* tensor_bf16_ops = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
constexpr const char* tensor_fp16_ops = "sm__ops_path_tensor_src_fp16.sum";
constexpr const char* tensor_fp16_dst_fp16_ops = "sm__ops_path_tensor_src_fp16_dst_fp16.sum";
constexpr const char* tensor_fp16_dst_fp32_ops = "sm__ops_path_tensor_src_fp16_dst_fp32.sum";
constexpr const char* tensor_tf32_ops = "sm__ops_path_tensor_src_tf32_dst_fp32.sum";
}  // namespace metric

struct MetricValue {
  std::string metric;  // ncu metric name, e.g. "dram__bytes_read.sum"
  double value = 0;    // in the metric's own unit (bytes, ns, %, operations)
};

// The values measured over one range: a scope's instances or one kernel.
struct CounterRange {
  std::string name;  // scope path ("step/forward") or kernel name
  std::vector<MetricValue> values;

  // The value of a metric, or nullptr when it was not collected.
  const double* find(const std::string& metric_name) const {
    for (const MetricValue& v : values)
      if (v.metric == metric_name) return &v.value;
    return nullptr;
  }
};

// What one CounterCapture produced. Empty ranges and a note when counters
// could not be collected (no permission, unsupported GPU, CUPTI busy).
struct CounterSet {
  std::vector<std::string> metrics;   // the metric set, in collection order
  int passes = 0;                     // replay passes the set needed
  std::string chip;                   // e.g. "GH100"
  std::string note;                   // why the set is empty or partial
  std::vector<CounterRange> scopes;   // one per scope path
  std::vector<CounterRange> kernels;  // one per kernel (auto-range mode), else empty

  bool empty() const { return scopes.empty() && kernels.empty(); }
};

// How merge_by_name() combines a metric over several ranges, from its ncu
// name "<unit>__<counter>.<rollup>[.<submetric>]": a plain .sum adds, .max
// and .min take the extreme, and everything else (.avg, percentages, ratios,
// rates) is a mean weighted by each range's duration.
enum class MetricMerge { sum, max, min, duration_weighted };
inline MetricMerge metric_merge(const std::string& metric_name) {
  const std::size_t dot = metric_name.find('.');
  const std::string rollup = dot == std::string::npos ? "" : metric_name.substr(dot + 1);
  if (rollup == "sum") return MetricMerge::sum;
  if (rollup == "max") return MetricMerge::max;
  if (rollup == "min") return MetricMerge::min;
  return MetricMerge::duration_weighted;
}

// One range per name, in order of first appearance: ranges of one name
// measured apart (kernels, sets from several captures) merged. Counts and the
// duration add up; a rate (".sum.per_second") and a throughput in % of peak
// over elapsed time become exactly those of the whole; a ratio measured over
// another base (L2 hit rate over sectors, occupancy over active cycles) is
// the duration-weighted mean, which is exact only when that base grows with
// time. Without a positive duration in every merged range, weights are equal. A metric
// that one of the ranges lacks is merged over those that have it.
inline std::vector<CounterRange> merge_by_name(const std::vector<CounterRange>& ranges) {
  std::vector<CounterRange> merged;
  std::vector<std::vector<const CounterRange*>> groups;
  for (const CounterRange& range : ranges) {
    auto found = std::find_if(merged.begin(), merged.end(),
                              [&](const CounterRange& m) { return m.name == range.name; });
    if (found == merged.end()) {
      merged.push_back({range.name, {}});
      groups.push_back({&range});
    } else {
      groups[static_cast<std::size_t>(found - merged.begin())].push_back(&range);
    }
  }
  for (std::size_t g = 0; g < merged.size(); ++g) {
    const std::vector<const CounterRange*>& group = groups[g];
    double time = 0;
    bool timed = true;
    for (const CounterRange* range : group) {
      const double* duration = range->find(metric::duration_ns);
      timed = timed && duration;
      time += duration ? *duration : 0.0;
    }
    timed = timed && time > 0;
    std::vector<std::string> names;  // every metric of the group, in order
    for (const CounterRange* range : group)
      for (const MetricValue& value : range->values)
        if (std::find(names.begin(), names.end(), value.metric) == names.end()) names.push_back(value.metric);
    for (const std::string& name : names) {
      const MetricMerge how = metric_merge(name);
      double total = 0, weights = 0;
      bool any = false;
      for (const CounterRange* range : group) {
        const double* value = range->find(name);
        if (!value) continue;
        const double weight = timed ? *range->find(metric::duration_ns) : 1.0;
        switch (how) {
          case MetricMerge::sum: total += *value; break;
          case MetricMerge::max: total = any ? std::max(total, *value) : *value; break;
          case MetricMerge::min: total = any ? std::min(total, *value) : *value; break;
          case MetricMerge::duration_weighted:
            total += weight * *value;
            weights += weight;
            break;
        }
        any = true;
      }
      if (how == MetricMerge::duration_weighted) total = weights > 0 ? total / weights : 0.0;
      merged[g].values.push_back({name, total});
    }
  }
  return merged;
}

GPUPROF_NAMESPACE_END
