// bench/dump.hpp: --dump DIR, a state dump of one training step that another
// implementation (PyTorch: docs/transformer-dump.md) can be checked against.
#pragma once
#include <string>

#include "harness/device.hpp"
#include "harness/run.hpp"
#include "model/backend.hpp"

namespace transformer::bench {

// Builds a fresh backend for `config` (its mode forced to step), runs forward,
// backward and one optimizer step on `batch`, and writes into `directory`:
// tokens.npy, targets.npy, params/<name>.npy, loss.npy, logits.npy,
// grads/<name>.npy, params_after/<name>.npy and manifest.json. Every file is
// written whole (temp + rename). Throws on failure (OutOfMemory included).
// With `graph` the step runs as two replayed CUDA graphs, the forward pass
// and then backward + optimizer step, as the logits are read in between.
void write_training_step_dump(const std::string& directory, const harness::Device& device, RunConfig config,
                              const harness::TokenBatch& batch, bool graph = false);

}  // namespace transformer::bench
