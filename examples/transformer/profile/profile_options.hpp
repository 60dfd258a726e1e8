// profile/profile_options.hpp: the command line of transformer_profile. The flags it
// shares with transformer_bench (sizes, contexts, precisions, batch, warm-up,
// steps, seed, custom dimensions) are parsed by transformer_bench's own
// parser, so both programs accept and reject exactly the same values.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/backend.hpp"
#include "model/config.hpp"

namespace transformer::profile {

// Exit statuses of transformer_profile (documented in docs/profiling.md).
inline constexpr int exit_ok = 0;
inline constexpr int exit_run_failed = 1;  // a configuration failed (not OOM), or writing failed
inline constexpr int exit_usage = 2;       // bad flags or an unwritable --out
inline constexpr int exit_no_device = 3;   // no usable GPU, or CUPTI cannot capture

struct ProfileOptions {
  std::vector<std::string> sizes = {"small", "large"};
  std::vector<int> contexts = {128, 256, 512, 1024};
  std::vector<Precision> precisions = {Precision::bf16};
  std::vector<Attention> attentions;  // empty: default_attention() per configuration
  int batch = 4;
  int warmup = 5;
  int steps = 10;
  std::uint64_t seed = 0;
  ModelConfig custom;   // dimensions of --size custom
  std::string out_dir;  // "" = markdown report on stdout only
  bool memory_table = false;
  bool trace = false;  // DIR/trace.json: one train step of the first configuration
  bool graph = false;  // time each run's step as replays of one captured CUDA graph
  // --idle-study: eager vs graph over transformer_bench's default sweep
  // (profile/idle_study.hpp); the lists default to that sweep's instead.
  bool idle_study = false;
  std::vector<Mode> modes;  // --idle-study only
  // Instead of the questions: device memory over each run (forward-only and
  // train step), drawn per configuration, with different defaults (below).
  bool memory_timeline = false;
  // Instead of the questions: hardware counters per scope and the roofline
  // (profile/counters_run.hpp), with the defaults below.
  bool counters = false;
  bool help = false;
};

// --memory-timeline's defaults where the flag is not given: the course's
// 2.7B model at ctx 128 and 512, one warm-up and one timed step (every
// buffer is allocated when the backend is built, so more steps repeat the
// same picture).
inline const std::vector<std::string> memory_timeline_sizes = {"2.7B"};
inline const std::vector<int> memory_timeline_contexts = {128, 512};
inline constexpr int memory_timeline_warmup = 1;
inline constexpr int memory_timeline_steps = 1;

// --counters' defaults where the flag is not given: one context (every metric
// pass replays the work), one warm-up step (outside the scopes measured: it
// runs in its own "warmup" scope) and two timed steps.
inline const std::vector<int> counters_contexts = {128};
inline constexpr int counters_warmup = 1;
inline constexpr int counters_steps = 2;

// Throws transformer::harness::UsageError naming the flag and value at fault.
ProfileOptions parse_profile_options(const std::vector<std::string>& args);

std::string profile_usage_text();

}  // namespace transformer::profile
