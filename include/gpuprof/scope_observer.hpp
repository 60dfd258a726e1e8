// gpuprof/scope_observer.hpp: the hook kernel capture, memory tracking and
// hardware counters use to follow scopes and add to reports (documented in
// profiler.hpp, defined here so that scope.hpp needs nothing above it).
#pragma once
#include <cstdint>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

struct Report;
enum class StepAction;

struct ScopeObserver {
  virtual ~ScopeObserver() = default;
  // On the scope's thread, after its instance id is assigned and before its
  // CUDA events are recorded.
  virtual void on_scope_begin(std::uint64_t instance_id) = 0;
  // On the scope's thread, after its end event is recorded. Only called for
  // scopes whose on_scope_begin this observer saw.
  virtual void on_scope_end(std::uint64_t instance_id) = 0;
  // Called by Profiler::report() once nodes and instances are built: adds
  // kernels, peak memory, counters and ceilings, ... The one way data
  // about a run reaches a report besides the scopes' own records.
  virtual void contribute(Report& report) = 0;
  // Called by Profiler::reset(): forget what was collected so far, so the
  // next report holds only what came after, as the scopes' own records do
  // (CounterCapture keeps its set: it describes one run, not a time span).
  virtual void on_reset() {}
  // Called by Profiler::set_schedule() and Profiler::step() while a schedule
  // is set, on that thread, with the action of the step that begins:
  // whether its work is kept (step_schedule.hpp). Kernel capture records
  // only in active steps. Called under the recorder's observer lock: no
  // add_observer(), remove_observer() or graph-source change from here.
  virtual void on_step(StepAction action) { (void)action; }
};

GPUPROF_NAMESPACE_END
