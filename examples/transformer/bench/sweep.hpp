// bench/sweep.hpp: the sweep over sizes × precisions × contexts × modes, one
// fresh backend per configuration (built, timed, freed before the next), with
// a progress line per configuration on stderr.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "configuration_run.hpp"
#include "device.hpp"
#include "options.hpp"
#include "result_row.hpp"

namespace transformer::bench {

// Every configuration of the (resolved) options, in run order.
std::vector<RunConfig> sweep_configurations(const DriverOptions& options);

std::vector<ResultRow> run_sweep(const Device& device, const DriverOptions& options,
                                 const std::map<Precision, double>& ceilings);

}  // namespace transformer::bench
