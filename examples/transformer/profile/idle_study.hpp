// profile/idle_study.hpp: transformer_profile --idle-study. For every
// configuration of transformer_bench's default sweep: the step time eager vs
// as one CUDA graph (capture off), and the share of the step the GPU sits
// idle, eager vs graph (capture on): (GPU projection - summed activity time)
// / GPU projection, where the projection runs from the step's first activity
// start to its last activity end. What needs no GPU (the arithmetic over a
// Report, the renderings) lives here and is tested on the CPU; the runs are
// in idle_study_run.cpp.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gpuprof/report_model.hpp>

#include "model/backend.hpp"
#include "profile/profile_results.hpp"

namespace transformer::profile {

// One timed step of a run, from the captured activities of its phase scopes
// (forward, backward, optimizer step under the run's root scope).
struct StepGpuTime {
  std::int64_t projection_ns = 0;  // first activity start to last activity end of the step
  // Time at least one of its kernels, copies or memsets ran: the union of
  // their intervals, not their sum, since the optimizer's pieces run beside
  // backward on a second stream.
  std::int64_t busy_ns = 0;
};

// Every timed step of the run under `root`, in order. An eager step's phases
// are scope instances, a graph step's phases are one launch's executions of
// the captured phase nodes; either way the k-th step is the k-th execution of
// each phase, by GPU start. Warm-up steps (under root/warmup) are left out.
// Throws std::runtime_error when the phases ran different numbers of times
// or there is no step.
std::vector<StepGpuTime> step_gpu_times(const gpuprof::Report& report, const std::string& root);

// (sum of projections - sum of busy time) / sum of projections, in % over the
// steps; nullopt without a projection. Overlapping activities (several
// streams) could make it negative: it is reported as measured.
std::optional<double> idle_percent(const std::vector<StepGpuTime>& steps);

// One configuration of the sweep.
struct IdleStudyRow {
  std::string configuration;  // harness::configuration_label: "small ctx 128 step bf16 fused attention"
  RunStatus status = RunStatus::ok;
  std::string note;                          // why it failed, or what did not fit
  StepTimes eager, graph;                    // capture off
  StepTimes eager_captured, graph_captured;  // capture on (the idle shares come from these runs)
  std::optional<double> eager_idle_percent, graph_idle_percent;
};

struct IdleStudy {
  std::string device;
  std::optional<std::string> cudnn;  // the cuDNN loaded at run time
  int batch = 0, warmup = 0, steps = 0;
  std::vector<std::string> notes;
  std::vector<IdleStudyRow> rows;
};

std::string idle_study_markdown(const IdleStudy& study);
// Schema "gpuprof.transformer_idle_study", version 1 (docs/profiling.md).
std::string idle_study_json(const IdleStudy& study);

}  // namespace transformer::profile
