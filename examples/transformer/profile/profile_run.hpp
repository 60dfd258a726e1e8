// profile/profile_run.hpp: the GPU side of transformer_profile: the plain
// benchmark of every configuration, the optional 2.7B memory table, then the
// captured runs and their analysis. Needs the CUDA backend and CUPTI.
#pragma once
#include <cstddef>
#include <cstdio>
#include <exception>
#include <optional>
#include <stdexcept>

#include "harness/device.hpp"
#include "harness/bench_results.hpp"
#include "profile/memory_timeline_results.hpp"
#include "profile/profile_options.hpp"
#include "profile/profile_results.hpp"

namespace transformer::profile {

// Runs everything `options` asks for. Writes the per-configuration kern_sum
// CSVs (and the trace) under options.out_dir as it goes, when one is given;
// the caller writes profile.md and profile.json from the result.
ProfileResults run_profile(const ProfileOptions& options);

// Throws harness::DeviceUnavailable without a usable GPU; touches nothing else, so
// main() calls it before creating any output directory.
void check_gpu();
// Shared by the profile's runs (here and idle_study_run.cpp):
// throws harness::DeviceUnavailable without a usable GPU, and probes it; then the
// device to run on. `describe` copies what every result file's header says.
harness::Device require_gpu();
template <class Results>
void describe(Results& results, const ProfileOptions& options, const harness::Device& device) {
  results.device = device.name();
  results.cudnn = device.cudnn();
  results.batch = options.batch;
  results.warmup = options.warmup;
  results.steps = options.steps;
}
// The progress lines of a run whose backend did not fit, and of one that
// threw (its status and note set from the error).
void print_oom(const std::optional<std::size_t>& bytes_needed);
template <class Run>
void mark_failed(Run& run, const std::exception& error) {
  run.status = RunStatus::error;
  run.note = error.what();
  std::fprintf(stderr, "  failed: %s\n", error.what());
}
RunConfig run_config(const ModelConfig& model, int ctx, Precision precision, Attention attention, Mode mode,
                     int batch, std::uint64_t seed);
// The run of configuration `c` in `mode`, with the batch and seed of `options`.
RunConfig run_config(const ProfileOptions& options, const ConfigurationProfile& c, Mode mode);
StepTimes step_times(const harness::ResultRow& row);
// Every size x ctx x precision x attention of `options` that can run; the ones
// that cannot (fused attention outside bf16 or its head sizes) go to `notes`.
std::vector<ConfigurationProfile> configurations(const ProfileOptions& options,
                                                 std::vector<std::string>& notes);
// --memory-timeline: every configuration forward-only and as a train step,
// on a fresh backend built while kernel capture records allocations and
// MemoryWatch samples every scope boundary. Writes each run's SVG picture and
// HTML report under options.out_dir as it goes; the caller writes the markdown.
MemoryTimelineResults run_memory_timelines(const ProfileOptions& options);

}  // namespace transformer::profile
