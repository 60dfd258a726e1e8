// gpuprof/kernel_aggregate.hpp: every captured record of one kernel name in
// one scope path, summarized in bounded memory (detail/kernel_aggregates.hpp
// folds them; Report::kernel_aggregates holds them).
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "config.hpp"
#include "kernel_record.hpp"
#include "online_summary.hpp"

GPUPROF_NAMESPACE_BEGIN

// Every record of one kernel (or copy, or memset) name launched in one scope
// path ("" outside any scope), innermost view.
struct KernelAggregate {
  std::string scope_path;
  ActivityKind kind = ActivityKind::kernel;
  std::string name, base_name, category;  // category and base name of the first record
  std::uint64_t count = 0;
  std::int64_t total_ns = 0;  // summed in integers, as kern_sum does
  std::int64_t min_ns = std::numeric_limits<std::int64_t>::max();
  std::int64_t max_ns = std::numeric_limits<std::int64_t>::min();
  OnlineSamples durations_ns{0};  // Welford figures and the sketch; no reservoir

  void add(const KernelRecord& record) {
    const std::int64_t duration = record.duration_ns();
    ++count;
    total_ns += duration;
    min_ns = std::min(min_ns, duration);
    max_ns = std::max(max_ns, duration);
    durations_ns.add(static_cast<double>(duration));
  }
  void merge(const KernelAggregate& other) {
    count += other.count;
    total_ns += other.total_ns;
    min_ns = std::min(min_ns, other.min_ns);
    max_ns = std::max(max_ns, other.max_ns);
    durations_ns.merge(other.durations_ns);
  }
};

GPUPROF_NAMESPACE_END
