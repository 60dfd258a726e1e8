// bench/warmup_study.hpp: --warmup-study, why warm-up matters: for w in
// {0, 1, 2, 5} the n timed steps after w warm-up steps, each on a fresh
// backend, so the first step's cost (kernel loading, cuBLAS heuristics, first
// touches of memory) shows apart from the steady state.
#pragma once
#include <iosfwd>
#include <vector>

#include "bench/driver_options.hpp"
#include "harness/device.hpp"
#include "harness/bench_results.hpp"

namespace transformer::bench {

inline const std::vector<int> warmup_study_counts = {0, 1, 2, 5};

// Every configuration of the sweep the device supports; an OOM configuration
// is left out with a message on stderr.
std::vector<harness::WarmupStudyRow> run_warmup_study(const harness::Device& device,
                                                      const DriverOptions& options);

void print_warmup_study(std::ostream& out, const std::vector<harness::WarmupStudyRow>& rows);

}  // namespace transformer::bench
