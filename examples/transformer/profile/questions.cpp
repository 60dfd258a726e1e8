// profile/questions.cpp: answers (a)-(e) from the captured reports.
#include "profile/questions.hpp"

#include <algorithm>
#include <stdexcept>

#include <gpuprof/kernel_names.hpp>

namespace transformer::profile {
namespace {

using gpuprof::Activities;
using gpuprof::KernelRecord;
using gpuprof::Report;

constexpr double ns_per_ms = 1e6;

std::string phase_path(const std::string& root, const std::string& phase) { return root + "/" + phase; }

std::int64_t summed_ns(const std::vector<KernelRecord>& records) {
  std::int64_t total = 0;
  for (const KernelRecord& record : records) total += record.duration_ns();
  return total;
}

double per_pass_ms(std::int64_t total_ns, std::uint64_t passes) {
  return static_cast<double>(total_ns) / ns_per_ms / static_cast<double>(passes);
}

// Timed executions of <root>/<phase>, which must exist.
std::uint64_t required_count(const Report& report, const std::string& root, const std::string& phase) {
  const std::uint64_t count = phase_count(report, root, phase);
  if (count == 0)
    throw std::runtime_error("the profile has no timed '" + phase_path(root, phase) + "' scope");
  return count;
}

ForwardTime forward_time(const Report& inference, const std::string& root) {
  const std::string path = phase_path(root, forward_scope);
  ForwardTime time;
  time.forwards = required_count(inference, root, forward_scope);
  for (const gpuprof::ScopeNode& node : inference.nodes)
    if (node.path == path && node.gpu_timed()) time.event_ms = node.gpu_ms.mean;

  const std::vector<KernelRecord> kernels =
      phase_kernels(inference, root, {forward_scope}, Activities::kernels);
  if (kernels.empty()) throw std::runtime_error("no kernel was captured inside '" + path + "'");
  time.kernel_sum_ms = per_pass_ms(summed_ns(kernels), time.forwards);

  std::int64_t projections_ns = 0;
  for (const gpuprof::InstanceGpuTime& instance : gpuprof::instance_gpu_times(inference))
    if (instance.node >= 0 && inference.nodes[static_cast<std::size_t>(instance.node)].path == path)
      projections_ns += instance.projection_ns;
  time.projection_ms = per_pass_ms(projections_ns, time.forwards);
  return time;
}

AttentionPart attention_part(const Report& inference, const std::string& root, const char* scope,
                             double flops, std::uint64_t forwards) {
  const std::string inside = phase_path(root, forward_scope) + "/";
  const std::vector<KernelRecord> kernels = kernels_where(
      inference,
      [&](const gpuprof::ScopeNode& node) { return node.name == scope && node.path.rfind(inside, 0) == 0; },
      Activities::kernels);
  AttentionPart part;
  part.scope = scope;
  part.kernels_per_forward = static_cast<double>(kernels.size()) / static_cast<double>(forwards);
  part.ms_per_forward = per_pass_ms(summed_ns(kernels), forwards);
  part.flops_per_forward = flops;
  return part;
}

// Inference and train-step shares side by side, in kernel_categories() order
// (category_breakdown lists every known category, so both lists line up;
// categories only one side has are appended).
std::vector<CategoryRow> category_rows(const std::vector<KernelRecord>& inference, std::uint64_t forwards,
                                       const std::vector<KernelRecord>& train, std::uint64_t steps) {
  std::vector<CategoryRow> rows;
  const auto row_for = [&rows](const std::string& category) -> CategoryRow& {
    for (CategoryRow& row : rows)
      if (row.category == category) return row;
    rows.push_back(CategoryRow{category});
    return rows.back();
  };
  for (const gpuprof::CategoryShare& share : gpuprof::category_breakdown(inference)) {
    CategoryRow& row = row_for(share.category);
    row.inference_percent = share.percent;
    row.inference_ms = per_pass_ms(share.total_ns, forwards);
  }
  for (const gpuprof::CategoryShare& share : gpuprof::category_breakdown(train)) {
    CategoryRow& row = row_for(share.category);
    row.train_percent = share.percent;
    row.train_ms = per_pass_ms(share.total_ns, steps);
  }
  return rows;
}

}  // namespace

double AttentionComparison::time_ratio() const {
  const double matmuls = scores.ms_per_forward + final_matmul.ms_per_forward;
  return matmuls > 0 ? softmax.ms_per_forward / matmuls : 0;
}

double AttentionComparison::flop_ratio() const {
  const double matmuls = scores.flops_per_forward + final_matmul.flops_per_forward;
  return matmuls > 0 ? softmax.flops_per_forward / matmuls : 0;
}

std::vector<KernelRecord> kernels_where(const Report& report,
                                        const std::function<bool(const gpuprof::ScopeNode&)>& wanted,
                                        Activities activities) {
  // Nodes are depth-first, so a parent's verdict is known before its children's.
  std::vector<bool> inside(report.nodes.size(), false);
  for (std::size_t i = 0; i < report.nodes.size(); ++i) {
    const int parent = report.nodes[i].parent;
    inside[i] = wanted(report.nodes[i]) || (parent >= 0 && inside[static_cast<std::size_t>(parent)]);
  }
  const std::vector<int> nodes = gpuprof::kernel_nodes(report);
  std::vector<KernelRecord> selected;
  for (std::size_t i = 0; i < report.kernels.size(); ++i) {
    const KernelRecord& record = report.kernels[i];
    if (activities == Activities::kernels && record.kind != gpuprof::ActivityKind::kernel) continue;
    if (nodes[i] >= 0 && inside[static_cast<std::size_t>(nodes[i])]) selected.push_back(record);
  }
  return selected;
}

std::vector<KernelRecord> phase_kernels(const Report& report, const std::string& root,
                                        const std::vector<std::string>& phases, Activities activities) {
  std::vector<std::string> paths;
  for (const std::string& phase : phases) paths.push_back(phase_path(root, phase));
  return kernels_where(
      report,
      [&](const gpuprof::ScopeNode& node) {
        return std::find(paths.begin(), paths.end(), node.path) != paths.end();
      },
      activities);
}

std::vector<KernelTime> kernel_times(const std::vector<KernelRecord>& records, std::uint64_t passes) {
  std::vector<KernelTime> times;
  for (const gpuprof::KernelSummaryRow& row : gpuprof::kern_sum(records)) {
    KernelTime time;
    time.name = row.name;
    time.base_name = gpuprof::base_name(row.name);
    time.category = row.category;
    time.total_ns = row.total_ns;
    time.instances = row.instances;
    time.percent = row.time_percent;
    time.ms_per_pass = per_pass_ms(row.total_ns, passes);
    time.instances_per_pass = static_cast<double>(row.instances) / static_cast<double>(passes);
    times.push_back(std::move(time));
  }
  return times;
}

std::uint64_t phase_count(const Report& report, const std::string& root, const std::string& phase) {
  const std::string path = phase_path(root, phase);
  for (const gpuprof::ScopeNode& node : report.nodes)
    if (node.path == path) return node.count;
  return 0;
}

ProfileAnswers answer_questions(const Report& inference, const std::string& inference_root,
                                const Report& train, const std::string& train_root,
                                const AttentionFlops& flops, double non_gemm_min_percent) {
  ProfileAnswers answers;
  answers.forward = forward_time(inference, inference_root);
  const std::uint64_t forwards = answers.forward.forwards;
  answers.train_steps = required_count(train, train_root, forward_scope);

  const std::vector<KernelTime> forward_kernels =
      kernel_times(phase_kernels(inference, inference_root, {forward_scope}, Activities::kernels), forwards);
  answers.top_forward = forward_kernels.front();  // forward_time() made sure there is one
  const std::vector<KernelTime> train_kernels =
      kernel_times(phase_kernels(train, train_root, {forward_scope, backward_scope}, Activities::kernels),
                   answers.train_steps);
  if (train_kernels.empty())
    throw std::runtime_error("no kernel was captured inside the forward and backward scopes of '" +
                             train_root + "'");
  answers.top_forward_backward = train_kernels.front();

  answers.non_gemm_min_percent = non_gemm_min_percent;
  for (const KernelTime& kernel : forward_kernels)
    if (kernel.category != "gemm" && kernel.percent > non_gemm_min_percent)
      answers.non_gemm_forward.push_back(kernel);

  answers.categories = category_rows(
      phase_kernels(inference, inference_root, {forward_scope}, Activities::all), forwards,
      phase_kernels(train, train_root, {forward_scope, backward_scope, optimizer_scope}, Activities::all),
      answers.train_steps);

  answers.attention.scores =
      attention_part(inference, inference_root, scores_scope, flops.scores_matmul, forwards);
  answers.attention.softmax =
      attention_part(inference, inference_root, softmax_scope, flops.softmax, forwards);
  answers.attention.final_matmul =
      attention_part(inference, inference_root, final_matmul_scope, flops.final_matmul, forwards);
  answers.dropped_kernel_records = inference.dropped_kernel_records + train.dropped_kernel_records;
  return answers;
}

}  // namespace transformer::profile
