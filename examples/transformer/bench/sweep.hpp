// bench/sweep.hpp: the sweep over sizes × precisions × contexts × modes (the
// points of sweep_axes), one fresh backend per configuration (built, timed,
// freed before the next), with a progress line per configuration on stderr,
// named as its row is.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "bench/driver_options.hpp"
#include "harness/device.hpp"
#include "harness/bench_results.hpp"
#include "harness/run.hpp"

namespace transformer::bench {

std::vector<harness::ResultRow> run_sweep(const harness::Device& device, const DriverOptions& options,
                                          const gpuprof::Axes& axes,
                                          const std::map<Precision, double>& ceilings);

}  // namespace transformer::bench
