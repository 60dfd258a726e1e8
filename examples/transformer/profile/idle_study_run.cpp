// profile/idle_study_run.cpp: the runs of the idle study, through the
// harness's configuration runner, as the profile's own runs go.
#include "profile/idle_study_run.hpp"

#include <gpuprof/cupti.hpp>
#include <gpuprof/profiler.hpp>

#include <cstdio>
#include <exception>
#include <optional>

#include "harness/device.hpp"
#include "harness/run.hpp"
#include "profile/profile_run.hpp"

namespace transformer::profile {
namespace {

struct StudyRun {
  RunConfig config;
  IdleStudyRow row;
};

// One run of the bench protocol, eager or graph; an oom result marks `run`
// and returns nothing. With `idle` (capture on), the run's idle share goes
// to *idle (the profile is reset first, so the report holds this run alone).
std::optional<StepTimes> time_run(const harness::Device& device, StudyRun& run, const ProfileOptions& options,
                                  bool graph, std::optional<double>* idle) {
  // Capture on: scopes captured into the graph are timed from its kernels and
  // add nothing to it; capture off: no stamps either, as transformer_bench runs.
  const harness::StepProtocol protocol{options.warmup, options.steps, graph,
                                       /*time_captured_scopes=*/idle != nullptr};
  if (idle) gpuprof::profiler().reset();
  const harness::ResultRow row = harness::run_configuration(device, run.config, protocol, {});
  if (row.status == harness::RowStatus::oom) {
    run.row.status = RunStatus::oom;
    run.row.note = "the backend did not fit";
    return std::nullopt;
  }
  if (idle)
    *idle =
        idle_percent(step_gpu_times(gpuprof::profiler().report(), harness::configuration_label(run.config)));
  return step_times(row);
}

template <class Work>
void guarded(StudyRun& run, const char* phase, Work&& work) {
  if (run.row.status != RunStatus::ok) return;
  std::fprintf(stderr, "idle study, %s: %s ...\n", phase, run.row.configuration.c_str());
  try {
    work();
  } catch (const std::exception& error) {
    run.row.status = RunStatus::error;
    run.row.note = error.what();
    std::fprintf(stderr, "  failed: %s\n", error.what());
  }
}

}  // namespace

IdleStudy run_idle_study(const ProfileOptions& options) {
  const harness::Device device = require_gpu();
  IdleStudy study;
  describe(study, options, device);

  std::vector<StudyRun> runs;
  for (const ConfigurationProfile& c : configurations(options, study.notes))
    for (const Mode mode : options.modes) {
      StudyRun run;
      run.config = run_config(options, c, mode);
      run.row.configuration = harness::configuration_label(run.config);
      runs.push_back(std::move(run));
    }

  for (StudyRun& run : runs)
    guarded(run, "capture off", [&] {
      const std::optional<StepTimes> eager = time_run(device, run, options, false, nullptr);
      if (!eager) return;
      run.row.eager = *eager;
      if (const std::optional<StepTimes> graph = time_run(device, run, options, true, nullptr))
        run.row.graph = *graph;
    });

  const gpuprof::KernelCapture capture;  // a scope observer and the graph scopes' timer while it lives
  if (!capture.active())
    throw harness::DeviceUnavailable("kernel capture (CUPTI) is unavailable: " + capture.why_inactive());
  for (StudyRun& run : runs)
    guarded(run, "capture on", [&] {
      const std::optional<StepTimes> eager =
          time_run(device, run, options, false, &run.row.eager_idle_percent);
      if (!eager) return;
      run.row.eager_captured = *eager;
      if (const std::optional<StepTimes> graph =
              time_run(device, run, options, true, &run.row.graph_idle_percent))
        run.row.graph_captured = *graph;
    });

  for (StudyRun& run : runs) study.rows.push_back(std::move(run.row));
  return study;
}

}  // namespace transformer::profile
