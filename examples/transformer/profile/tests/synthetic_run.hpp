// profile/tests/synthetic_run.hpp: builds the Report a captured
// harness::time_steps run would give, scope by scope and kernel by kernel, so
// the tests know every duration they expect.
#pragma once
#include <gpuprof/report_model.hpp>
#include <gpuprof/stats.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace transformer::profile::testing {

class SyntheticRun {
 public:
  // Activities run back to back on the GPU, this far apart.
  static constexpr std::int64_t gap_ns = 10;

  explicit SyntheticRun(const std::string& root) { open(root); }

  // A scope nested in the innermost open one. Nodes are created in first-use
  // order, which keeps parents before children.
  void open(const std::string& name) {
    const std::string path =
        open_.empty() ? name : report_.nodes[static_cast<std::size_t>(open_.back().node)].path + "/" + name;
    auto found = node_of_path_.find(path);
    if (found == node_of_path_.end()) {
      gpuprof::ScopeNode node;
      node.path = path;
      node.name = name;
      node.parent = open_.empty() ? -1 : open_.back().node;
      node.depth = static_cast<int>(open_.size());
      report_.nodes.push_back(node);
      found = node_of_path_.emplace(path, static_cast<int>(report_.nodes.size() - 1)).first;
    }
    gpuprof::ScopeInstance instance;
    instance.id = next_id_++;
    instance.node = found->second;
    instance.host_begin_ns = ++host_ns_;
    open_.push_back(instance);
  }

  // Closes the innermost scope; `event_ms` >= 0 gives it a CUDA-event time.
  void close(double event_ms = -1) {
    gpuprof::ScopeInstance instance = open_.back();
    open_.pop_back();
    instance.host_end_ns = ++host_ns_;
    instance.gpu_ms = event_ms;
    report_.instances.push_back(instance);
    gpuprof::ScopeNode& node = report_.nodes[static_cast<std::size_t>(instance.node)];
    ++node.count;
    if (event_ms >= 0) event_ms_[instance.node].push_back(event_ms);
  }

  // An activity launched by the innermost open scope.
  void kernel(const std::string& base_name, const std::string& category, std::int64_t duration_ns,
              gpuprof::ActivityKind kind = gpuprof::ActivityKind::kernel) {
    gpuprof::KernelRecord record;
    record.kind = kind;
    record.name = "void " + base_name + "<float>(float*, int)";
    record.base_name = base_name;
    record.category = category;
    record.scope_instance = open_.back().id;
    record.start_ns = gpu_ns_ + gap_ns;
    record.end_ns = record.start_ns + duration_ns;
    record.launch_ns = ++host_ns_;
    gpu_ns_ = record.end_ns;
    report_.kernels.push_back(record);
  }

  // Closes what is still open (the root) and returns the report.
  gpuprof::Report report() {
    while (!open_.empty()) close();
    for (const auto& [node, samples] : event_ms_)
      report_.nodes[static_cast<std::size_t>(node)].gpu_ms = gpuprof::summarize(samples);
    report_.timing_source = gpuprof::TimingSource::cuda_events;
    // Instances are listed in begin order, as Profiler::report() lists them.
    std::sort(report_.instances.begin(), report_.instances.end(),
              [](const gpuprof::ScopeInstance& a, const gpuprof::ScopeInstance& b) {
                return a.host_begin_ns < b.host_begin_ns;
              });
    return report_;
  }

 private:
  gpuprof::Report report_;
  std::map<std::string, int> node_of_path_;
  std::map<int, std::vector<double>> event_ms_;
  std::vector<gpuprof::ScopeInstance> open_;
  std::uint64_t next_id_ = 1;
  std::int64_t host_ns_ = 0;
  std::int64_t gpu_ns_ = 1000;
};

}  // namespace transformer::profile::testing
