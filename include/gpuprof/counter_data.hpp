// gpuprof/counter_data.hpp: hardware counter values per scope or per kernel,
// as CounterCapture (counters.hpp) measures them. Plain data with no CUPTI
// dependency, so reports, the roofline and their tests work without a GPU.
#pragma once
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
constexpr const char* memory_throughput_pct = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed";
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
  std::string name;         // scope path ("step/forward") or kernel name
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
  std::vector<std::string> metrics;  // the metric set, in collection order
  int passes = 0;                    // replay passes the set needed
  std::string chip;                  // e.g. "GH100"
  std::string note;                  // why the set is empty or partial
  std::vector<CounterRange> scopes;  // one per scope path
  std::vector<CounterRange> kernels; // one per kernel (auto-range mode), else empty

  bool empty() const { return scopes.empty() && kernels.empty(); }
};

// FLOPs a range executed, from the per-pipe counters; metrics that were not
// collected count zero, so a set without them gives 0.
inline double fp32_flops(const CounterRange& range) {
  auto value = [&range](const char* name) {
    const double* found = range.find(name);
    return found ? *found : 0.0;
  };
  return 2 * value(metric::fp32_ffma) + value(metric::fp32_fadd) + value(metric::fp32_fmul);
}
inline double tensor_flops(const CounterRange& range) {
  double sum = 0;
  for (const char* name : {metric::tensor_bf16_ops, metric::tensor_fp16_ops, metric::tensor_fp16_dst_fp16_ops,
                           metric::tensor_fp16_dst_fp32_ops, metric::tensor_tf32_ops})
    if (const double* found = range.find(name)) sum += *found;
  return sum;
}

GPUPROF_NAMESPACE_END
