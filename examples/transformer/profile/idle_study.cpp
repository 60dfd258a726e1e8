// profile/idle_study.cpp: step GPU times from a Report, and the idle study's
// markdown and JSON.
#include "profile/idle_study.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <gpuprof/comm_overlap.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/kernel_summary.hpp>

#include "harness/cells.hpp"
#include "harness/output.hpp"
#include "profile/questions.hpp"
#include "profile/report_json.hpp"
#include "profile/report_markdown.hpp"

namespace transformer::profile {

std::vector<StepGpuTime> step_gpu_times(const gpuprof::Report& report, const std::string& root) {
  const std::string phases[] = {root + "/" + forward_scope, root + "/" + backward_scope,
                                root + "/" + optimizer_scope};
  // Per phase, its executions that ran GPU work (a graph's replay instances
  // launch nothing themselves: their work is in the per-launch executions).
  std::vector<std::vector<gpuprof::InstanceGpuTime>> executions(std::size(phases));
  for (const gpuprof::InstanceGpuTime& time : gpuprof::instance_gpu_times(report)) {
    if (time.activities == 0 || time.node < 0) continue;
    const std::string& path = report.nodes[static_cast<std::size_t>(time.node)].path;
    for (std::size_t p = 0; p < std::size(phases); ++p)
      if (path == phases[p]) executions[p].push_back(time);
  }
  std::size_t steps = 0;
  for (auto& phase : executions) {
    std::sort(phase.begin(), phase.end(),
              [](const gpuprof::InstanceGpuTime& a, const gpuprof::InstanceGpuTime& b) {
                return a.first_start_ns < b.first_start_ns;
              });
    if (phase.empty()) continue;
    if (steps != 0 && phase.size() != steps)
      throw std::runtime_error("the phases of '" + root + "' ran different numbers of times (" +
                               std::to_string(steps) + " vs " + std::to_string(phase.size()) + ")");
    steps = phase.size();
  }
  if (steps == 0) throw std::runtime_error("no timed step of '" + root + "' ran GPU work");
  // Busy time: the union of every activity's interval, clipped to the step.
  std::vector<gpuprof::TimeInterval> activity;
  activity.reserve(report.kernels.size());
  for (const gpuprof::KernelRecord& record : report.kernels)
    activity.push_back({record.start_ns, record.end_ns});
  const std::vector<gpuprof::TimeInterval> busy = gpuprof::interval_union(std::move(activity));
  std::vector<StepGpuTime> times(steps);
  for (std::size_t k = 0; k < steps; ++k) {
    std::int64_t first = std::numeric_limits<std::int64_t>::max(),
                 last = std::numeric_limits<std::int64_t>::min();
    for (const auto& phase : executions) {
      if (phase.empty()) continue;
      first = std::min(first, phase[k].first_start_ns);
      last = std::max(last, phase[k].last_end_ns);
    }
    times[k].projection_ns = last - first;
    times[k].busy_ns = gpuprof::covered_ns(gpuprof::interval_intersection(busy, {{first, last}}));
  }
  return times;
}

std::optional<double> idle_percent(const std::vector<StepGpuTime>& steps) {
  double projection = 0, busy = 0;
  for (const StepGpuTime& step : steps) {
    projection += static_cast<double>(step.projection_ns);
    busy += static_cast<double>(step.busy_ns);
  }
  if (projection <= 0) return std::nullopt;
  return 100.0 * (projection - busy) / projection;
}

namespace {

using harness::fixed;

std::optional<double> mean_of(const IdleStudyRow& row, const StepTimes& times) {
  return row.status == RunStatus::ok && times.steps > 0 ? std::optional<double>(times.mean_ms) : std::nullopt;
}

std::optional<double> speedup(const IdleStudyRow& row) {
  const auto eager = mean_of(row, row.eager), graph = mean_of(row, row.graph);
  return eager && graph && *graph > 0 ? std::optional<double>(*eager / *graph) : std::nullopt;
}

}  // namespace

std::string idle_study_markdown(const IdleStudy& study) {
  std::vector<std::vector<std::string>> rows;
  for (const IdleStudyRow& row : study.rows) {
    const std::string overhead =
        row.status == RunStatus::ok ? fixed(capture_overhead_percent(row.graph, row.graph_captured), 1) : "-";
    rows.push_back({row.configuration, fixed(mean_of(row, row.eager), 3), fixed(mean_of(row, row.graph), 3),
                    fixed(speedup(row), 2), fixed(row.eager_idle_percent, 1),
                    fixed(row.graph_idle_percent, 1), overhead,
                    row.status == RunStatus::ok ? "" : std::string(to_string(row.status)) + ": " + row.note});
  }
  std::ostringstream out;
  out << "# Eager vs CUDA graph: step time and GPU idle share\n\n"
      << "Device: " << harness::device_text(study.device, study.cudnn) << ". Batch " << study.batch << ", "
      << study.warmup << " warm-up and " << study.steps
      << " timed steps per run, each configuration of transformer_bench's default sweep. "
      << "Step times: mean of the timed steps with kernel capture off (CUDA events around each step; a graph "
         "step is one replay of the step captured after the warm-up). Idle share: over the timed steps of a "
         "second pair of runs with kernel capture on, (GPU projection - time covered by kernels, copies and "
         "memsets) / "
         "GPU projection, the projection running from a step's first activity start to its last activity "
         "end. "
         "Capture overhead: graph step with capture on vs off.\n\n";
  write_notes_markdown(out, study.notes);
  out << harness::numbers_right_table(
             {"configuration", "eager (ms)", "graph (ms)", "eager / graph", "idle eager (%)",
              "idle graph (%)", "capture overhead, graph (%)", "note"},
             std::move(rows))
             .markdown();
  return out.str();
}

std::string idle_study_json(const IdleStudy& study) {
  gpuprof::JsonWriter json;
  begin_results_json(json, "gpuprof.transformer_idle_study", 1, study);
  write_notes(json, study.notes);
  json.key("rows").begin_array();
  for (const IdleStudyRow& row : study.rows) {
    json.begin_object()
        .member("configuration", row.configuration)
        .member("status", to_string(row.status))
        .member("note", row.note);
    write_step_times(json, "eager", row.eager);
    write_step_times(json, "graph", row.graph);
    write_step_times(json, "eager_capture_on", row.eager_captured);
    write_step_times(json, "graph_capture_on", row.graph_captured);
    write_optional(json, "eager_idle_percent", row.eager_idle_percent);
    write_optional(json, "graph_idle_percent", row.graph_idle_percent);
    json.end_object();
  }
  json.end_array().end_object();
  return json.str() + "\n";
}

}  // namespace transformer::profile
