// gpuprof/step_schedule.hpp: which steps of a training loop a profile keeps,
// as torch.profiler.schedule decides it.
//
// ```cpp
// #include <gpuprof/profiler.hpp>
// #include <gpuprof/scope.hpp>
// int main() {
//   auto& p = gpuprof::profiler();
//   p.set_schedule(gpuprof::schedule(/*wait=*/1, /*warmup=*/1, /*active=*/3, /*repeat=*/2));
//   for (int i = 0; i < 100; ++i) {
//     { GPUPROF_SCOPE("train_step"); }  // the step's work, in scopes
//     p.step();                         // the step boundary
//   }
//   return p.report().nodes.at(0).count == 6 ? 0 : 1;  // 2 cycles of 3 active steps
// }
// ```
//
// Steps are numbered from 0 (set_schedule() starts step 0). The first
// `skip_first` steps are skipped; after them each cycle is `wait` steps,
// `warmup` steps, then `active` steps, `repeat` times (0: without end), and
// every step after the last cycle is skipped. StepAction names a step's part
// as torch.profiler.ProfilerAction does; record_and_save is the last active
// step of a cycle. Profiler::step() documents what each action does to scopes.
#pragma once
#include <cstdint>
#include <string>

#include "config.hpp"
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN

enum class StepAction {
  none,            // skip_first, wait, or past the last cycle
  warmup,          // the program runs as profiled; nothing is kept
  record,          // active: kept
  record_and_save  // active, the last step of its cycle
};

inline const char* step_action_name(StepAction action) {
  switch (action) {
    case StepAction::none: return "none";
    case StepAction::warmup: return "warmup";
    case StepAction::record: return "record";
    case StepAction::record_and_save: return "record_and_save";
  }
  return "none";
}

inline bool is_active(StepAction action) {
  return action == StepAction::record || action == StepAction::record_and_save;
}

struct StepSchedule {
  std::uint64_t wait = 0, warmup = 0, active = 1, repeat = 0, skip_first = 0;

  // torch.profiler.schedule's function, step for step.
  StepAction action(std::uint64_t step) const {
    if (step < skip_first) return StepAction::none;
    step -= skip_first;
    const std::uint64_t cycle = wait + warmup + active;
    if (cycle == 0) return StepAction::none;  // active 0: schedule() refuses it
    if (repeat > 0 && step / cycle >= repeat) return StepAction::none;
    const std::uint64_t within = step % cycle;
    if (within < wait) return StepAction::none;
    if (within < wait + warmup) return StepAction::warmup;
    return within + 1 < cycle ? StepAction::record : StepAction::record_and_save;
  }
};

// A StepSchedule, checked as torch.profiler.schedule checks its arguments:
// gpuprof::Error unless active >= 1 and the others >= 0.
inline StepSchedule schedule(long long wait, long long warmup, long long active, long long repeat = 0,
                             long long skip_first = 0) {
  if (wait < 0 || warmup < 0 || active < 1 || repeat < 0 || skip_first < 0)
    throw Error("gpuprof: schedule(wait=" + std::to_string(wait) + ", warmup=" + std::to_string(warmup) +
                ", active=" + std::to_string(active) + ", repeat=" + std::to_string(repeat) +
                ", skip_first=" + std::to_string(skip_first) +
                "): active must be at least 1 and the others at least 0");
  return {static_cast<std::uint64_t>(wait), static_cast<std::uint64_t>(warmup),
          static_cast<std::uint64_t>(active), static_cast<std::uint64_t>(repeat),
          static_cast<std::uint64_t>(skip_first)};
}

GPUPROF_NAMESPACE_END
