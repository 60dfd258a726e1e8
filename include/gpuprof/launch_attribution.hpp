// gpuprof/launch_attribution.hpp: adopt_by_launch_time(report), charging
// kernels that a thread without an open scope launched to the scope open
// elsewhere at their launch.
//
// ```cpp
// #include <gpuprof/launch_attribution.hpp>
// #include <cstddef>
// std::size_t charge_backward(gpuprof::Report& report) { return gpuprof::adopt_by_launch_time(report); }
// ```
//
// Kernel capture ties a launch to the scopes open on the launching thread.
// PyTorch runs backward on its autograd engine's own threads, where no
// gpuprof scope is open: `with gpuprof.scope("backward"): loss.backward()`
// would get none of its kernels. Such a record (no scope, not graph work,
// known launch time; graph work charged to its capture node is not one)
// goes to the deepest scope instance, on any thread, whose host interval
// holds its launch time. With scopes on one thread (a training loop) that is
// the scope the user wrapped the call in. The Python module's
// Report.adopt_by_launch_time and profiler's adopt_other_threads call it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "config.hpp"
#include "report_model.hpp"

GPUPROF_NAMESPACE_BEGIN

// Returns how many records it charged.
inline std::size_t adopt_by_launch_time(Report& report) {
  const std::vector<ScopeInstance>& instances = report.instances;
  std::vector<std::size_t> by_begin(instances.size());
  for (std::size_t i = 0; i < by_begin.size(); ++i) by_begin[i] = i;
  std::sort(by_begin.begin(), by_begin.end(), [&](std::size_t a, std::size_t b) {
    return instances[a].host_begin_ns < instances[b].host_begin_ns;
  });
  std::vector<std::size_t> orphans;
  for (std::size_t k = 0; k < report.kernels.size(); ++k) {
    const KernelRecord& record = report.kernels[k];
    if (record.scope_instance == 0 && record.scope_node < 0 && record.launch_ns > 0) orphans.push_back(k);
  }
  std::sort(orphans.begin(), orphans.end(), [&](std::size_t a, std::size_t b) {
    return report.kernels[a].launch_ns < report.kernels[b].launch_ns;
  });
  // Sweep launch times in order; `open` holds the instances begun so far
  // that have not ended before the current launch.
  std::vector<std::size_t> open;
  std::size_t next = 0;
  std::size_t adopted = 0;
  for (const std::size_t k : orphans) {
    KernelRecord& record = report.kernels[k];
    while (next < by_begin.size() && instances[by_begin[next]].host_begin_ns <= record.launch_ns)
      open.push_back(by_begin[next++]);
    open.erase(std::remove_if(open.begin(), open.end(),
                              [&](std::size_t i) { return instances[i].host_end_ns < record.launch_ns; }),
               open.end());
    const ScopeInstance* deepest = nullptr;
    for (const std::size_t i : open) {
      const ScopeInstance& candidate = instances[i];
      if (candidate.node < 0) continue;
      if (!deepest || report.nodes[static_cast<std::size_t>(candidate.node)].depth >
                          report.nodes[static_cast<std::size_t>(deepest->node)].depth)
        deepest = &candidate;
    }
    if (deepest) {
      record.scope_instance = deepest->id;
      ++adopted;
    }
  }
  return adopted;
}

GPUPROF_NAMESPACE_END
