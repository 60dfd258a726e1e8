// harness/run.hpp: running one configuration the course's way: a token batch
// from the model's generator, w warm-up and n timed steps in the phase scopes
// (forward, backward, optimizer step), and the row of what was measured.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/device.hpp"
#include "harness/bench_results.hpp"
#include "model/backend.hpp"

namespace transformer::harness {

struct TokenBatch {
  std::vector<std::int32_t> tokens;   // [batch, ctx], row-major, in [0, vocab)
  std::vector<std::int32_t> targets;  // [batch, ctx]
};

TokenBatch make_token_batch(const RunConfig& config, std::uint64_t seed);

struct StepTiming {
  std::vector<double> samples_ms;  // the n timed steps, in order
  double cold_ms = 0;              // the first step of the backend
  bool gpu_timed = false;          // CUDA events (else the host clock)
};

// All of it inside a scope named `scope_name` (one root of the profile per
// configuration). With warmup == 0 the cold step is the first timed step:
// that is what the warm-up study shows.
//
struct StepProtocol {
  int warmup = 5;
  int steps = 10;
  bool graph = false;  // timed steps replay the step captured as one CUDA graph
  // With `graph`: the scopes captured in the step time every replay. With
  // no KernelCapture capturing, that takes stamp kernels, which cost GPU time
  // (about 3.6 µs per scope per replay on the H100, hundreds of scopes in a
  // step), so the benchmark's step times come from a graph without them; with
  // one capturing (the profile's analysed runs), the replays are timed from
  // the captured kernels and the graph holds no stamps either way.
  bool time_captured_scopes = false;
};

// All of it inside a scope named `scope_name` (one root of the profile per
// configuration). With warmup == 0 the cold step is the first timed step:
// that is what the warm-up study shows.
//
// With `graph`, the warm-up steps still run eagerly; at the end of the last
// one (before the first step with none) the step, in its phase scopes, is
// captured as one CUDA graph, and every timed step is one replay of it. The
// timing around each step is the same CUDA event pair either way; the scopes
// captured in the step are timed on every replay (gpuprof's graph stamps),
// under the same paths as eager steps, when `time_captured_scopes` asks.
StepTiming time_steps(Backend& backend, Mode mode, const StepProtocol& protocol,
                      const std::string& scope_name);

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

}  // namespace transformer::harness
