// bench/driver_options.hpp: the command line of transformer_bench: the shared run
// flags (harness/run_flags.hpp) and the benchmark's own outputs and studies.
// The defaults that depend on the device (which sizes, contexts, precisions)
// are filled in later by resolve_defaults.
#pragma once
#include <gpuprof/axes.hpp>

#include <optional>
#include <string>
#include <vector>

#include "harness/run_flags.hpp"

namespace transformer::bench {

struct DriverOptions : harness::RunFlags {
  // Time each configuration's step as replays of one CUDA graph (--graph) or
  // eagerly (--eager); unset: graphs on the GPU (resolve_defaults).
  std::optional<bool> graph;
  std::string json_path, csv_path, dump_dir, torch_jsonl_path;
  bool print_report = false;
  std::string report_json_path, trace_path;
  bool warmup_study = false;
  int loss_curve_steps = 0;  // 0: no loss-curve study
  bool help = false;
};

// Throws harness::UsageError naming the flag and the value at fault.
DriverOptions parse_options(const std::vector<std::string>& args);
DriverOptions parse_options(int argc, char** argv);

// Fills the empty lists: on a GPU the small model at ctx 128…1024, every mode,
// fp32 and bf16, each step one CUDA graph; on the CPU the tiny model at ctx
// 128 in fp32, eagerly (about ten seconds for the default 5 + 10 steps of
// every mode).
void resolve_defaults(DriverOptions& options, bool on_gpu);

std::string usage_text();

// Every configuration of the (resolved) options, in run order: sizes ×
// precisions × (each attention chosen, or each context's default) ×
// contexts × modes.
std::vector<RunConfig> sweep_configurations(const DriverOptions& options);

// The same configurations as the points of parameter axes (harness::sweep_point),
// in the same order: a list of points rather than a product, since each
// context's default attention depends on the precision and the model. Throws
// harness::UsageError when two configurations are one point (a value listed
// twice).
gpuprof::Axes sweep_axes(const DriverOptions& options);

}  // namespace transformer::bench
