// profile/one_step.cpp: cuts a Report down to its first timed step.
#include "profile/one_step.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <unordered_set>
#include <vector>

namespace transformer::profile {

gpuprof::Report one_step_report(const gpuprof::Report& report, const std::string& root) {
  const std::string forward_path = root + "/forward";
  std::vector<std::int64_t> forward_begins;
  for (const gpuprof::ScopeInstance& instance : report.instances)
    if (instance.node >= 0 && report.nodes[static_cast<std::size_t>(instance.node)].path == forward_path)
      forward_begins.push_back(instance.host_begin_ns);
  if (forward_begins.empty()) throw std::runtime_error("no timed '" + forward_path + "' scope to trace");
  std::sort(forward_begins.begin(), forward_begins.end());
  const std::int64_t begin = forward_begins.front();
  const std::int64_t end =
      forward_begins.size() > 1 ? forward_begins[1] : std::numeric_limits<std::int64_t>::max();

  gpuprof::Report step = report;
  step.instances.clear();
  step.kernels.clear();
  std::unordered_set<std::uint64_t> kept;
  for (const gpuprof::ScopeInstance& instance : report.instances) {
    if (instance.host_begin_ns >= begin && instance.host_end_ns < end) {
      step.instances.push_back(instance);
      kept.insert(instance.id);
    }
  }
  // Graph work belongs to a scope node, not an instance: it is in the step
  // when it ran inside the step's window (replays' instances carry GPU time
  // on the same steady clock as the activities).
  for (const gpuprof::KernelRecord& kernel : report.kernels) {
    const bool graph_work = kernel.scope_instance == 0 && kernel.graph_launch != 0;
    if (graph_work ? kernel.start_ns >= begin && kernel.start_ns < end
                   : kept.count(kernel.scope_instance) != 0)
      step.kernels.push_back(kernel);
  }
  return step;
}

}  // namespace transformer::profile
