// profile/questions.hpp: the course's profiling questions (a)-(e), answered
// from two captured gpuprof Reports of one configuration: a forward-only run
// ("inference") and a train-step run. Pure functions over Report, so every
// answer is tested on synthetic kernels without a GPU.
//
// Each run is what harness::time_steps records: a root scope named after the
// configuration, warm-up steps under <root>/warmup (left out of every answer
// here), and the timed steps' phases at <root>/forward, <root>/backward and
// <root>/optimizer step, with the backend's scopes nested inside.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <gpuprof/kernel_summary.hpp>
#include <gpuprof/report_model.hpp>

#include "profile/attention_flops.hpp"

namespace transformer::profile {

// Scope names this file reads: the step phases (harness/run.cpp) and
// the course's attention ranges (cuda/attention.cu).
inline constexpr const char* forward_scope = "forward";
inline constexpr const char* backward_scope = "backward";
inline constexpr const char* optimizer_scope = "optimizer step";
inline constexpr const char* scores_scope = "computing attention scores";
inline constexpr const char* softmax_scope = "computing softmax";
inline constexpr const char* final_matmul_scope = "final matmul";

// (a) One forward pass, over the timed forward scopes of the inference run.
struct ForwardTime {
  std::uint64_t forwards = 0;      // timed forward executions
  std::optional<double> event_ms;  // mean CUDA-event time of the scope; none when not GPU-timed
  double kernel_sum_ms = 0;        // summed kernel durations per forward
  double projection_ms = 0;        // mean first-kernel-start to last-activity-end per forward
};

// One kernel (grouped by its full demangled name, as nsys does) within a pass.
struct KernelTime {
  std::string name;
  std::string base_name;
  std::string category;
  std::int64_t total_ns = 0;
  std::uint64_t instances = 0;
  double percent = 0;  // of the pass's summed kernel time
  double ms_per_pass = 0;
  double instances_per_pass = 0;
};

// (d) One category's share of GPU activity time (copies and memsets count as
// "memory"), per forward in inference and per train step.
struct CategoryRow {
  std::string category;
  double inference_percent = 0;
  double train_percent = 0;
  double inference_ms = 0;  // per forward
  double train_ms = 0;      // per train step
};

// (e) One of the three attention scopes: its kernels' time and its FLOPs per forward.
struct AttentionPart {
  std::string scope;
  double kernels_per_forward = 0;
  double ms_per_forward = 0;
  double flops_per_forward = 0;
  double tflop_per_s() const { return ms_per_forward > 0 ? flops_per_forward / ms_per_forward / 1e9 : 0; }
};

struct AttentionComparison {
  AttentionPart scores, softmax, final_matmul;
  // softmax / (scores + final matmul): in time and in FLOPs.
  double time_ratio() const;
  double flop_ratio() const;
};

struct ProfileAnswers {
  ForwardTime forward;              // (a)
  KernelTime top_forward;           // (b) the inference run's forward
  KernelTime top_forward_backward;  //     the train run's forward + backward, per train step
  std::uint64_t train_steps = 0;    //     timed train steps
  bool same_top_kernel() const { return top_forward.name == top_forward_backward.name; }
  std::vector<KernelTime> non_gemm_forward;  // (c) above the threshold, by time
  double non_gemm_min_percent = 0;
  std::vector<CategoryRow> categories;       // (d)
  AttentionComparison attention;             // (e)
  std::uint64_t dropped_kernel_records = 0;  // both runs; non-zero means the numbers are low
};

// Throws std::runtime_error when a run lacks its timed forward scopes or
// captured no kernel there (capture off, or the wrong root).
ProfileAnswers answer_questions(const gpuprof::Report& inference, const std::string& inference_root,
                                const gpuprof::Report& train, const std::string& train_root,
                                const AttentionFlops& flops, double non_gemm_min_percent = 1.0);

// --- the pieces, public for the tests --------------------------------------------

// Records launched inside a scope node that `wanted` accepts, or inside any
// scope nested in one (the inclusive view).
std::vector<gpuprof::KernelRecord> kernels_where(const gpuprof::Report& report,
                                                 const std::function<bool(const gpuprof::ScopeNode&)>& wanted,
                                                 gpuprof::Activities activities);

// The records of the timed phases `phases` (names of <root>/<phase>) of a run.
std::vector<gpuprof::KernelRecord> phase_kernels(const gpuprof::Report& report, const std::string& root,
                                                 const std::vector<std::string>& phases,
                                                 gpuprof::Activities activities);

// kern_sum of `records` as KernelTimes, `passes` being how many passes they cover.
std::vector<KernelTime> kernel_times(const std::vector<gpuprof::KernelRecord>& records, std::uint64_t passes);

// Executions of <root>/<phase>; 0 when the node is absent.
std::uint64_t phase_count(const gpuprof::Report& report, const std::string& root, const std::string& phase);

}  // namespace transformer::profile
