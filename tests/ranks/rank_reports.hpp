// tests/ranks/rank_reports.hpp: synthetic per-rank reports of a data-parallel
// run with known step times and kernels, for merge and overlap tests.
#pragma once
#include <gpuprof/report.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace gpuprof_test {

constexpr std::int64_t us = 1000;  // nanoseconds
constexpr std::int64_t step_stride_ns = 20'000 * us;
constexpr std::int64_t clock_origin_ns = 7'000'000'000;

inline std::int64_t step_begin_ns(std::size_t step) {
  return clock_origin_ns + static_cast<std::int64_t>(step) * step_stride_ns;
}

// "setup" (once), then per step "train" > {"train/forward", "train/backward"};
// train's GPU time is step_ms[s], forward a third of it, backward the rest.
// Kernels: none; add them with add_kernel.
inline gpuprof::Report rank_report(int rank, int world_size, const std::vector<double>& step_ms,
                                   const std::string& host = "node-a") {
  gpuprof::Report report;
  report.timing_source = gpuprof::TimingSource::cuda_events;
  report.device_name = "Synthetic GPU";
  report.environment.host_name = host;
  report.rank = {rank, world_size, rank};
  const char* paths[] = {"setup", "train", "train/forward", "train/backward"};
  const int parents[] = {-1, -1, 1, 1};
  std::vector<std::vector<double>> samples(4);
  std::uint64_t id = 0;
  const auto add_instance = [&](int node, std::int64_t begin, std::int64_t end, double gpu_ms) {
    report.instances.push_back({++id, node, 0, begin, end, gpu_ms});
    samples[static_cast<std::size_t>(node)].push_back(gpu_ms);
  };
  add_instance(0, clock_origin_ns - 5000 * us, clock_origin_ns - 1000 * us, 4.0);
  for (std::size_t s = 0; s < step_ms.size(); ++s) {
    const std::int64_t begin = step_begin_ns(s);
    const auto length = static_cast<std::int64_t>(step_ms[s] * 1e6);
    add_instance(1, begin, begin + length, step_ms[s]);
    add_instance(2, begin, begin + length / 3, step_ms[s] / 3);
    add_instance(3, begin + length / 3, begin + length, step_ms[s] * 2 / 3);
  }
  for (int n = 0; n < 4; ++n) {
    gpuprof::ScopeNode node;
    node.path = paths[n];
    node.name = node.path.substr(node.path.rfind('/') + 1);
    node.parent = parents[n];
    node.depth = parents[n] < 0 ? 0 : 1;
    node.count = samples[static_cast<std::size_t>(n)].size();
    node.host_ms = node.gpu_ms = gpuprof::summarize(samples[static_cast<std::size_t>(n)]);
    report.nodes.push_back(node);
  }
  return report;
}

// The instance of `node` in step `step` (rank_report's layout: 1 + 3 per step).
inline std::uint64_t instance_id(std::size_t step, int node) {
  return 2 + 3 * static_cast<std::uint64_t>(step) + static_cast<std::uint64_t>(node - 1);
}

// A kernel on `stream` over [begin_us, end_us) after step `step`'s begin,
// launched from node `node`'s instance of that step.
inline void add_kernel(gpuprof::Report& report, std::size_t step, int node, const char* category,
                       std::uint32_t stream, std::int64_t begin_us, std::int64_t end_us,
                       gpuprof::ActivityKind kind = gpuprof::ActivityKind::kernel) {
  gpuprof::KernelRecord kernel;
  kernel.kind = kind;
  kernel.name = kernel.base_name = std::string(category) + "_kernel";
  kernel.category = category;
  kernel.stream = stream;
  kernel.start_ns = step_begin_ns(step) + begin_us * us;
  kernel.end_ns = step_begin_ns(step) + end_us * us;
  kernel.launch_ns = step_begin_ns(step) + us;
  kernel.scope_instance = instance_id(step, node);
  report.kernels.push_back(kernel);
}

}  // namespace gpuprof_test
