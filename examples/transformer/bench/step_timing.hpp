// bench/step_timing.hpp: the course's timing protocol on one backend, through
// gpuprof::bench: w warm-up steps (the first of them is bench's timed cold
// call), then n timed steps, the device synchronized after every step; each
// step's phases inside the gpuprof scopes "forward", "backward" and
// "optimizer step", warm-up steps inside a "warmup" scope.
//
// With `graph`, the warm-up steps still run eagerly; at the end of the last
// one (before the first step with none) the step, in its phase scopes, is
// captured as one CUDA graph, and every timed step is one replay of it. The
// timing around each step is the same CUDA event pair either way. Until
// gpuprof times scopes inside graphs, the phase scopes then keep only the
// capture's host time: one instance each, no GPU time.
#pragma once
#include <string>
#include <vector>

#include "backend.hpp"

namespace transformer::bench {

struct StepTiming {
  std::vector<double> samples_ms;  // the n timed steps, in order
  double cold_ms = 0;              // the first step of the backend
  bool gpu_timed = false;          // CUDA events (else the host clock)
};

// All of it inside a scope named `scope_name` (one root of the profile per
// configuration). With warmup == 0 the cold step is the first timed step:
// that is what the warm-up study shows.
StepTiming time_steps(Backend& backend, Mode mode, int warmup, int steps,
                      const std::string& scope_name, bool graph = false);

}  // namespace transformer::bench
