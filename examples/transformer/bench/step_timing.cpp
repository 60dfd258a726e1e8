// bench/step_timing.cpp: one step in its phase scopes, and the warm-up/timed protocol.
#include "step_timing.hpp"

#include <gpuprof/bench.hpp>
#include <gpuprof/scope.hpp>

#include "backend.hpp"

namespace transformer::bench {
namespace {

void run_step_in_scopes(Backend& backend, Mode mode, gpuprof::Stream stream) {
  {
    GPUPROF_SCOPE("forward", stream);
    backend.forward();
  }
  if (mode == Mode::fwd) return;
  {
    GPUPROF_SCOPE("backward", stream);
    backend.backward();
  }
  if (mode == Mode::fwdbwd) return;
  GPUPROF_SCOPE("optimizer step", stream);
  backend.optimizer_step();
}

}  // namespace

StepTiming time_steps(Backend& backend, Mode mode, int warmup, int steps,
                      const std::string& scope_name, bool graph) {
  const gpuprof::Stream stream = backend.stream();
  GPUPROF_SCOPE(scope_name, stream);
  // The capture enqueues nothing: its only cost is host time, inside the
  // last warm-up step's measurement (with one warm-up step, the cold one's).
  const auto capture = [&] {
    backend.capture_graph([&] { run_step_in_scopes(backend, mode, stream); });
  };
  if (graph && warmup == 0) capture();
  int calls = 0;
  const auto step = [&] {
    if (calls++ < warmup) {
      {
        GPUPROF_SCOPE("warmup", stream);
        run_step_in_scopes(backend, mode, stream);
      }
      if (graph && calls == warmup) capture();
    } else if (graph) {
      backend.replay_graph();
    } else {
      run_step_in_scopes(backend, mode, stream);
    }
  };

  // bench always makes one timed cold call before its warm-up calls: it is
  // the first of our w warm-up steps, or, with w == 0, the first timed step.
  gpuprof::BenchOptions options;
  options.stream = stream;
  options.warmup = warmup > 0 ? warmup - 1 : 0;
  options.iters = warmup > 0 || steps == 1 ? steps : steps - 1;
  const gpuprof::BenchResult result = gpuprof::bench(step, options);

  StepTiming timing;
  timing.gpu_timed = result.timing_source == gpuprof::TimingSource::cuda_events;
  timing.cold_ms = result.cold_ms;
  const std::vector<double>& samples = timing.gpu_timed ? result.gpu_ms : result.host_ms;
  if (warmup == 0) timing.samples_ms.push_back(result.cold_ms);
  for (const double sample : samples)
    if (static_cast<int>(timing.samples_ms.size()) < steps) timing.samples_ms.push_back(sample);
  return timing;
}

}  // namespace transformer::bench
