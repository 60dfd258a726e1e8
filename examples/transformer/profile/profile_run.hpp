// profile/profile_run.hpp: the GPU side of transformer_profile: the plain
// benchmark of every configuration, the optional 2.7B memory table, then the
// captured runs and their analysis. Needs the CUDA backend and CUPTI.
#pragma once
#include <stdexcept>

#include "profile/memory_timeline_results.hpp"
#include "profile/profile_options.hpp"
#include "profile/profile_results.hpp"

namespace transformer::profile {

// No usable GPU, or CUPTI cannot capture (another profiler attached, ...):
// main() prints what() and exits with exit_no_device.
struct DeviceUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs everything `options` asks for. Writes the per-configuration kern_sum
// CSVs (and the trace) under options.out_dir as it goes, when one is given;
// the caller writes profile.md and profile.json from the result.
ProfileResults run_profile(const ProfileOptions& options);

// --memory-timeline: every configuration forward-only and as a train step,
// on a fresh backend built while kernel capture records allocations and
// MemoryWatch samples every scope boundary. Writes each run's SVG picture and
// HTML report under options.out_dir as it goes; the caller writes the markdown.
MemoryTimelineResults run_memory_timelines(const ProfileOptions& options);

}  // namespace transformer::profile
