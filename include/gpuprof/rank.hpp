// gpuprof/rank.hpp: which process of a multi-process (data-parallel) run a
// report came from, so reports of one run can be merged (merge.hpp).
//
// ```cpp
// #include <gpuprof/profiler.hpp>
// void set_rank(int rank, int world_size) { gpuprof::profiler().set_rank(rank, world_size); }
// ```
// Or, unset, from the environment at report time: RANK, WORLD_SIZE,
// LOCAL_RANK (torchrun, mpirun wrappers and SLURM-style launchers export them).
//
// Unknown values are -1; a single-process run has no rank at all. Variables
// that contradict each other (RANK=5 WORLD_SIZE=2) are left out of the
// report, with a warning on stderr: a merge would otherwise trust them.
#pragma once
#include <cerrno>
#include <cstdlib>
#include <string>

#include "config.hpp"
#include "diagnostics.hpp"

GPUPROF_NAMESPACE_BEGIN

struct RankInfo {
  int rank = -1;        // 0 .. world_size - 1
  int world_size = -1;  // processes in the run
  int local_rank = -1;  // index on its host (usually the GPU it drives)

  bool known() const { return rank >= 0; }
};

namespace detail {
// A non-negative integer environment variable; -1 when unset or not one.
inline int environment_count(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text, &end, 10);
  return *end == '\0' && errno == 0 && value >= 0 && value <= 1'000'000 ? static_cast<int>(value) : -1;
}
}  // namespace detail

// RANK, WORLD_SIZE and LOCAL_RANK as the launcher set them, unchecked; each
// -1 when absent or not a number.
inline RankInfo rank_variables() {
  return {detail::environment_count("RANK"), detail::environment_count("WORLD_SIZE"),
          detail::environment_count("LOCAL_RANK")};
}

// Why `info` cannot be one process of a run ("" when it can): an empty
// world, or a rank or local rank outside it.
inline std::string rank_inconsistency(const RankInfo& info) {
  if (info.world_size < 0) return "";
  const std::string world = " outside WORLD_SIZE " + std::to_string(info.world_size);
  if (info.world_size == 0) return "WORLD_SIZE 0";
  if (info.rank >= info.world_size) return "RANK " + std::to_string(info.rank) + world;
  if (info.local_rank >= info.world_size) return "LOCAL_RANK " + std::to_string(info.local_rank) + world;
  return "";
}

// rank_variables() when they agree; otherwise no rank at all and, once per
// process, a warning saying why.
inline RankInfo rank_from_environment() {
  const RankInfo info = rank_variables();
  const std::string problem = rank_inconsistency(info);
  if (problem.empty()) return info;
  diagnose(Severity::warning, problem + "; the report carries no rank", "rank");
  return {};
}

// "rank 1 of 4 (local 1)", "" when unknown.
inline std::string rank_description(const RankInfo& info) {
  if (!info.known()) return "";
  std::string text = "rank " + std::to_string(info.rank);
  if (info.world_size > 0) text += " of " + std::to_string(info.world_size);
  if (info.local_rank >= 0) text += " (local " + std::to_string(info.local_rank) + ")";
  return text;
}

GPUPROF_NAMESPACE_END
