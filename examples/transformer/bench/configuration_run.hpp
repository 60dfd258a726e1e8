// bench/configuration_run.hpp: one configuration of the sweep measured on a
// fresh backend, turned into a result row (ok, or oom with the memory needed).
#pragma once
#include <map>
#include <string>

#include "device.hpp"
#include "result_row.hpp"
#include "token_batch.hpp"

namespace transformer::bench {

struct StepProtocol {
  int warmup = 5;
  int steps = 10;
};

// The row of the sweep that runs `config` (its mode and precision included) on
// make_token_batch(config, config.seed), made once the backend exists: an
// OutOfMemory from the backend's constructor gives an oom row before a batch
// too large for the host is allocated; any other failure propagates.
// `ceilings` (TFLOP/s by precision) give MFU; empty: MFU null.
ResultRow run_configuration(const Device& device, const RunConfig& config, const StepProtocol& protocol,
                            const std::map<Precision, double>& ceilings);

// The row's identity fields, with nothing measured (a row of any status starts here).
ResultRow blank_row(const Device& device, const RunConfig& config, const StepProtocol& protocol);

// "small ctx 512 step bf16": names the configuration in progress lines and scopes.
std::string configuration_label(const RunConfig& config);

// Matrix FLOPs of one step of `mode`: the forward's, ×3 with a backward pass.
double step_flops(const RunConfig& config);

}  // namespace transformer::bench
