// bench/warmup_study.hpp: --warmup-study, why warm-up matters: for w in
// {0, 1, 2, 5} the n timed steps after w warm-up steps, each on a fresh
// backend, so the first step's cost (kernel loading, cuBLAS heuristics, first
// touches of memory) shows apart from the steady state.
#pragma once
#include <iosfwd>
#include <vector>

#include "device.hpp"
#include "options.hpp"
#include "results.hpp"

namespace transformer::bench {

inline const std::vector<int> warmup_study_counts = {0, 1, 2, 5};

// Every configuration of the sweep the device supports; an OOM configuration
// is left out with a message on stderr.
std::vector<WarmupStudyRow> run_warmup_study(const Device& device, const DriverOptions& options);

void print_warmup_study(std::ostream& out, const std::vector<WarmupStudyRow>& rows);

}  // namespace transformer::bench
