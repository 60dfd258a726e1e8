// profile/counters_results.hpp: what transformer_profile --counters measured:
// per configuration and mode (forward-only, train step) the run's report with
// hardware counters per scope and the card's roofs, and the answer read off
// it: which scopes are memory- and which compute-bound, and how far each sits
// below its roof. Rendered by counters_markdown.cpp (no device needed).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <gpuprof/report_model.hpp>

#include "model/backend.hpp"
#include "profile/profile_results.hpp"

namespace transformer::profile {

struct CountersRun {
  std::string label;  // "small ctx 128 bf16 cudnn"
  std::string slug;   // for file names
  Mode mode = Mode::fwd;
  RunStatus status = RunStatus::ok;
  std::string note;        // why it failed, or why the counters are empty
  gpuprof::Report report;  // scopes, counters and ceilings of the run
};

struct CountersResults {
  std::string device;
  std::optional<std::string> cudnn;  // the cuDNN loaded at run time
  int batch = 0, warmup = 0, steps = 0;
  gpuprof::RooflineCeilings ceilings;  // measured once, the same for every run
  std::vector<std::string> notes;      // configurations left out
  std::vector<CountersRun> runs;
};

// "counters-small-ctx128-bf16-cudnn-fwd.svg" and its .json beside it.
std::string counters_file(const CountersRun& run, const std::string& extension);

// DIR/roofline.md (docs/transformer-counters.md describes it): the ceilings,
// then per run a table of its scopes (bound, % of roof, intensity, rate,
// DRAM bytes, declared FLOPs) and its roofline picture.
std::string counters_markdown(const CountersResults& results);

// The same answers as JSON (schema "transformer_profile.counters", version 1).
std::string counters_json(const CountersResults& results);

}  // namespace transformer::profile
