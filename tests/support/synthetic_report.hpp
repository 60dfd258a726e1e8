// tests/support/synthetic_report.hpp: a small, fully known training-step
// report (scopes, instances, kernels, allocations, memory in use) for the
// tests of writers that draw or transform a whole report, and single
// timeline allocations for tests that build their own.
#pragma once
#include <gpuprof/report.hpp>
#include <gpuprof/build_memory_timeline.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace gpuprof_test {

// One allocation of a memory timeline, made inside `scope` ("" for none);
// free_ns -1: never freed.
inline gpuprof::TimelineAllocation timeline_allocation(std::int64_t bytes, std::int64_t alloc_ns,
                                                       std::int64_t free_ns, const std::string& scope) {
  gpuprof::TimelineAllocation allocation;
  allocation.bytes = bytes;
  allocation.alloc_ns = alloc_ns;
  allocation.free_ns = free_ns;
  allocation.scope_path = scope;
  return allocation;
}

// Three train steps: step > forward > {attention, mlp}, step > backward,
// step > optimizer, then one "eval" root. Each step allocates activations in
// forward (freed in backward) and gradients in backward (freed in optimizer);
// weights are allocated before any scope.
inline gpuprof::Report synthetic_training_report() {
  using gpuprof::ScopeNode;
  gpuprof::Report report;
  report.timing_source = gpuprof::TimingSource::cuda_events;
  report.device_name = "Synthetic GPU";
  report.environment.gpu_name = "Synthetic GPU";
  report.environment.host_name = "test-host";
  report.environment.time_utc = "2026-01-01T00:00:00Z";
  struct Shape {
    const char* path;
    int parent;
    int depth;
    std::int64_t offset_us, length_us;
  };
  const Shape shapes[] = {{"step", -1, 0, 0, 1000},
                          {"step/forward", 0, 1, 10, 380},
                          {"step/forward/attention", 1, 2, 20, 200},
                          {"step/forward/mlp", 1, 2, 230, 150},
                          {"step/backward", 0, 1, 400, 450},
                          {"step/optimizer", 0, 1, 860, 130},
                          {"eval", -1, 0, 0, 300}};
  const int steps = 3;
  const std::int64_t step_ns = 1'200'000, origin = 5'000'000'000;
  std::uint64_t id = 0;
  std::vector<std::vector<double>> gpu(std::size(shapes));
  for (int step = 0; step <= steps; ++step) {
    for (std::size_t s = 0; s < std::size(shapes); ++s) {
      const bool eval = s + 1 == std::size(shapes);
      if (eval != (step == steps)) continue;  // eval runs once, after the steps
      gpuprof::ScopeInstance instance;
      instance.id = ++id;
      instance.node = static_cast<int>(s);
      instance.host_begin_ns = origin + step * step_ns + shapes[s].offset_us * 1000;
      instance.host_end_ns = instance.host_begin_ns + shapes[s].length_us * 1000;
      instance.gpu_ms = static_cast<double>(shapes[s].length_us) / 1000 * (1 + 0.01 * step);
      gpu[s].push_back(instance.gpu_ms);
      report.instances.push_back(instance);
    }
  }
  std::stable_sort(report.instances.begin(), report.instances.end(),
                   [](const auto& a, const auto& b) { return a.host_begin_ns < b.host_begin_ns; });
  for (std::size_t s = 0; s < std::size(shapes); ++s) {
    ScopeNode node;
    node.path = shapes[s].path;
    node.name = node.path.substr(node.path.rfind('/') + 1);
    node.parent = shapes[s].parent;
    node.depth = shapes[s].depth;
    node.count = gpu[s].size();
    node.host_ms = gpuprof::summarize(gpu[s]);
    node.gpu_ms = gpuprof::summarize(gpu[s]);
    report.nodes.push_back(node);
  }

  // Kernels: each leaf-ish scope launches a few, one per category.
  struct Launch {
    int node;
    const char* name;
    const char* category;
    std::int64_t offset_us, length_us;
  };
  const Launch launches[] = {
      {2, "sm90_xmma_gemm_bf16", "gemm", 30, 80},   {2, "softmax_kernel", "softmax", 120, 40},
      {3, "sm90_xmma_gemm_bf16", "gemm", 240, 90},  {3, "swiglu_kernel", "elementwise", 340, 30},
      {4, "sm90_xmma_gemm_bf16", "gemm", 420, 300}, {4, "reduce_kernel", "reduction", 730, 60},
      {5, "adamw_kernel", "elementwise", 870, 100}};
  std::uint32_t correlation = 0;
  for (const gpuprof::ScopeInstance& instance : report.instances) {
    for (const Launch& launch : launches) {
      if (launch.node != instance.node) continue;
      const std::int64_t step_begin = instance.host_begin_ns - shapes[launch.node].offset_us * 1000;
      gpuprof::KernelRecord kernel;
      kernel.name = kernel.base_name = launch.name;
      kernel.category = launch.category;
      kernel.start_ns = step_begin + launch.offset_us * 1000;
      kernel.end_ns = kernel.start_ns + launch.length_us * 1000;
      kernel.launch_ns = kernel.start_ns - 5000;
      kernel.stream = 7;
      kernel.correlation_id = ++correlation;
      kernel.scope_instance = instance.id;
      kernel.grid[0] = kernel.block[0] = 128;
      report.kernels.push_back(kernel);
    }
  }

  // Memory: 400 MiB of weights first, then per step 256 MiB activations
  // (forward -> backward) and 128 MiB gradients (backward -> optimizer).
  constexpr std::int64_t mib = 1 << 20;
  std::vector<gpuprof::AllocationRecord> records;
  std::uint64_t address = 0x7f0000000000;
  records.push_back({origin - 1000, 400 * mib, address, 0, false});
  for (int step = 0; step < steps; ++step) {
    const std::int64_t begin = origin + step * step_ns;
    const std::uint64_t activations = address + (1 + 2 * step) * 0x100000000ull;
    const std::uint64_t gradients = activations + 0x80000000ull;
    records.push_back({begin + 25'000, 160 * mib, activations, 0, false});               // attention
    records.push_back({begin + 235'000, 96 * mib, activations + 0x40000000, 0, false});  // mlp
    records.push_back({begin + 410'000, 128 * mib, gradients, 0, false});                // backward
    records.push_back({begin + 800'000, -160 * mib, activations, 0, false});
    records.push_back({begin + 820'000, -96 * mib, activations + 0x40000000, 0, false});
    records.push_back({begin + 950'000, -128 * mib, gradients, 0, false});
  }
  std::vector<gpuprof::MemoryUsePoint> in_use;
  const std::int64_t context = 500 * mib;
  std::int64_t live = 0;
  std::size_t next_record = 0;
  std::vector<std::int64_t> boundaries;
  for (const gpuprof::ScopeInstance& instance : report.instances) {
    boundaries.push_back(instance.host_begin_ns);
    boundaries.push_back(instance.host_end_ns);
  }
  std::sort(boundaries.begin(), boundaries.end());
  for (std::int64_t t : boundaries) {
    while (next_record < records.size() && records[next_record].time_ns <= t)
      live += records[next_record++].bytes;
    in_use.push_back({t, context + live});
  }
  report.memory_timeline = gpuprof::build_memory_timeline(report, in_use, records);
  return report;
}

}  // namespace gpuprof_test
