// profile/memory_timeline_results.hpp: what transformer_profile
// --memory-timeline measured, and its renderings that need no device: the
// file names, the phases marked on the pictures, and DIR/memory-timeline.md
// (per run its picture and its largest allocations with the scope that made
// them). The pictures themselves are gpuprof's (report/memory_timeline_svg.hpp).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <gpuprof/memory_timeline.hpp>
#include <gpuprof/report/memory_timeline_svg.hpp>
#include <gpuprof/report_model.hpp>

#include "model/backend.hpp"
#include "profile/profile_results.hpp"

namespace transformer::profile {

// One configuration in one mode, from its backend's construction to its release.
struct MemoryTimelineRun {
  std::string label;  // "2.7B ctx 512 bf16 fused" (ConfigurationProfile::label)
  std::string slug;   // "2.7B-ctx512-bf16-fused"
  Mode mode = Mode::step;
  RunStatus status = RunStatus::ok;
  std::string note;                         // why it failed (error)
  std::optional<std::size_t> bytes_needed;  // oom
  std::size_t allocated_bytes = 0;          // Backend::allocated_bytes()
  gpuprof::MemoryTimeline timeline;
  std::vector<gpuprof::TimelineSpan> spans;  // memory_timeline_phases() of its report
};

struct MemoryTimelineResults {
  std::string device;
  std::optional<std::string> cudnn;  // the cuDNN loaded at run time
  int batch = 0, warmup = 0, steps = 0;
  std::vector<std::string> notes;  // configurations left out, and why
  std::vector<MemoryTimelineRun> runs;
};

// The scopes shaded on the pictures: the backend's construction and the
// step phases (warm-up steps' included).
std::vector<gpuprof::TimelineSpan> memory_timeline_phases(const gpuprof::Report& report);

// "memory-timeline-2.7B-ctx512-bf16-fused-step.svg" for extension "svg".
std::string memory_timeline_file(const MemoryTimelineRun& run, const std::string& extension);
inline constexpr const char* memory_timeline_markdown_file = "memory-timeline.md";
inline constexpr std::size_t memory_timeline_largest = 10;  // allocations listed per run

// "2.7B ctx 512 bf16 fused, train step": the picture's title.
std::string memory_timeline_title(const MemoryTimelineRun& run);

std::string memory_timeline_markdown(const MemoryTimelineResults& results);

}  // namespace transformer::profile
