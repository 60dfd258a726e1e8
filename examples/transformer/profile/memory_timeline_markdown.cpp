// profile/memory_timeline_markdown.cpp: the device-free side of
// --memory-timeline (memory_timeline_results.hpp).
#include <gpuprof/table.hpp>

#include <algorithm>
#include <sstream>

#include "harness/cells.hpp"
#include "harness/output.hpp"
#include "profile/memory_timeline_results.hpp"
#include "profile/questions.hpp"
#include "profile/report_markdown.hpp"

namespace transformer::profile {
namespace {

using harness::fixed;

// The backend's construction (model/cuda_model.cu): its allocations' parent scope.
constexpr const char* build_scope = "build backend";

std::string mode_text(Mode mode) {
  switch (mode) {
    case Mode::fwd: return "forward only";
    case Mode::fwdbwd: return "forward + backward";
    case Mode::step: return "train step";
  }
  return to_string(mode);
}

std::string size_text(std::int64_t bytes) {
  constexpr double mib = 1024.0 * 1024.0;
  if (bytes >= 1024 * 1024 * 1024LL) return fixed(static_cast<double>(bytes) / (1024.0 * mib), 2) + " GiB";
  return fixed(static_cast<double>(bytes) / mib, 2) + " MiB";
}

std::string ms_since(std::int64_t time_ns, std::int64_t origin_ns) {
  return fixed(static_cast<double>(time_ns - origin_ns) / 1e6, 1);
}

void run_section(std::ostream& out, const MemoryTimelineRun& run) {
  out << "## " << memory_timeline_title(run) << "\n\n";
  if (run.status == RunStatus::oom) {
    out << "Out of memory: the backend needs "
        << size_text(static_cast<std::int64_t>(run.bytes_needed.value_or(0))) << ".\n\n";
    return;
  }
  if (run.status == RunStatus::error) {
    out << "Failed: " << run.note << "\n\n";
    return;
  }
  out << "![" << memory_timeline_title(run) << "](" << memory_timeline_file(run, "svg") << ")\n\n";
  const gpuprof::StackedAllocations stacked = gpuprof::stack_allocations(run.timeline);
  std::int64_t in_use_low = -1, in_use_high = -1;
  for (const gpuprof::MemoryUsePoint& point : run.timeline.in_use) {
    in_use_low = in_use_low < 0 ? point.bytes_in_use : std::min(in_use_low, point.bytes_in_use);
    in_use_high = std::max(in_use_high, point.bytes_in_use);
  }
  // The backend's regions, to check against its own count: every byte of its
  // arena should have been seen allocated in one of its allocation scopes.
  const std::string region_scope = std::string(build_scope) + "/allocate ";
  std::int64_t in_regions = 0;
  for (const gpuprof::TimelineAllocation& a : run.timeline.allocations)
    if (a.scope_path.rfind(region_scope, 0) == 0) in_regions += a.bytes;
  out << run.timeline.allocations.size() << " allocations captured, " << size_text(stacked.peak_bytes)
      << " live at most; the backend's arena: " << size_text(static_cast<std::int64_t>(run.allocated_bytes))
      << ", allocated in `" << region_scope << "…` scopes: " << size_text(in_regions) << ".";
  if (in_use_high >= 0)
    out << " Device memory in use at scope boundaries: " << size_text(in_use_low) << " to "
        << size_text(in_use_high) << ".";
  out << " Interactive version: [" << memory_timeline_file(run, "html") << "]("
      << memory_timeline_file(run, "html") << ").\n\n";

  const std::int64_t origin = gpuprof::timeline_extent(run.timeline, run.spans).first;
  gpuprof::Table t;
  for (const auto& [header, align] :
       std::vector<std::pair<const char*, gpuprof::Align>>{{"#", gpuprof::Align::right},
                                                           {"size", gpuprof::Align::right},
                                                           {"scope that made it", gpuprof::Align::left},
                                                           {"allocated at (ms)", gpuprof::Align::right},
                                                           {"freed at (ms)", gpuprof::Align::right},
                                                           {"lifetime (ms)", gpuprof::Align::right}})
    t.add_column({header, align});
  const auto largest = gpuprof::largest_allocations(run.timeline, memory_timeline_largest);
  for (std::size_t i = 0; i < largest.size(); ++i) {
    const gpuprof::TimelineAllocation& a = largest[i];
    const bool freed = a.free_ns >= 0;
    t.add_row({std::to_string(i + 1), size_text(a.bytes), a.scope_path.empty() ? "(no scope)" : a.scope_path,
               ms_since(a.alloc_ns, origin), freed ? ms_since(a.free_ns, origin) : "live at the end",
               freed ? fixed(static_cast<double>(a.free_ns - a.alloc_ns) / 1e6, 1) : "-"});
  }
  out << "Largest allocations (times from the picture's origin):\n\n" << t.markdown() << "\n";
}

}  // namespace

std::vector<gpuprof::TimelineSpan> memory_timeline_phases(const gpuprof::Report& report) {
  return gpuprof::scope_spans(report, {build_scope, forward_scope, backward_scope, optimizer_scope});
}

std::string memory_timeline_file(const MemoryTimelineRun& run, const std::string& extension) {
  return "memory-timeline-" + run.slug + "-" + to_string(run.mode) + "." + extension;
}

std::string memory_timeline_title(const MemoryTimelineRun& run) {
  return run.label + ", " + mode_text(run.mode);
}

std::string memory_timeline_markdown(const MemoryTimelineResults& results) {
  std::ostringstream out;
  out << "# Device memory over time\n\n"
      << "Device: " << harness::device_text(results.device, results.cudnn) << ". Batch " << results.batch
      << ", " << results.warmup << " warm-up and " << results.steps
      << " timed step(s) per run, each run on a fresh backend, from its construction to its release. "
         "Produced by "
         "`transformer_profile --memory-timeline`.\n\n"
      << "Each picture stacks the live device allocations that kernel capture (CUPTI) saw, in allocation "
         "order "
         "as PyTorch's memory viewer does, coloured by the gpuprof scope open when each was made; the line "
         "is "
         "the device memory in use (cudaMemGetInfo, whole device, CUDA context included) sampled at every "
         "scope "
         "boundary; shaded: the backend's construction and the forward, backward and optimizer phases. The "
         "CUDA backend allocates all its memory when it is built, in a few regions of one purpose each, and "
         "frees it when it is destroyed: nothing is allocated or freed during a step, so the picture is flat "
         "through the steps, unlike PyTorch's, where activations rise through the forward pass and fall "
         "through "
         "the backward pass. Buffers with disjoint lifetimes share bytes inside a region (the gradients "
         "share "
         "with the saved activations), so a region is one block here.\n\n";
  write_notes_markdown(out, results.notes);
  for (const MemoryTimelineRun& run : results.runs) run_section(out, run);
  return out.str();
}

}  // namespace transformer::profile
