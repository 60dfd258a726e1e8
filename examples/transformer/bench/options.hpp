// bench/options.hpp: the command line of transformer_bench, parsed into plain
// data. Parsing never touches a device; the defaults that depend on the device
// (which sizes, contexts, precisions) are filled in later by resolve_defaults.
#pragma once
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.hpp"
#include "model/config.hpp"

namespace transformer::bench {

// Bad command-line input. main() prints what() and exits with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DeviceChoice { automatic, cuda, cpu };

struct DriverOptions {
  // Empty lists mean "the default for the device" (resolve_defaults).
  std::vector<std::string> sizes;  // names from size_names(), or "custom"
  std::vector<int> contexts;
  std::vector<Mode> modes;
  std::vector<Precision> precisions;
  int batch = 4;
  int warmup = 5;
  int steps = 10;
  // Time each configuration's step as replays of one CUDA graph (--graph) or
  // eagerly (--eager); unset: graphs on the GPU (resolve_defaults).
  std::optional<bool> graph;
  DeviceChoice device = DeviceChoice::automatic;
  ModelConfig custom;      // the dimensions of --size custom
  std::uint64_t seed = 0;  // parameters and token ids

  std::string json_path, csv_path, dump_dir, torch_jsonl_path;
  bool print_report = false;
  std::string report_json_path, trace_path;
  bool warmup_study = false;
  int loss_curve_steps = 0;  // 0: no loss-curve study
  bool help = false;
};

// Throws UsageError naming the flag and the value at fault.
DriverOptions parse_options(const std::vector<std::string>& args);
DriverOptions parse_options(int argc, char** argv);

// Fills the empty lists: on a GPU the small model at ctx 128…1024, every mode,
// fp32 and bf16, each step one CUDA graph; on the CPU the tiny model at ctx
// 128 in fp32, eagerly (about ten seconds for the default 5 + 10 steps of
// every mode).
void resolve_defaults(DriverOptions& options, bool on_gpu);

// The model configuration of a size name ("custom" gives options.custom).
ModelConfig model_for_size(const DriverOptions& options, const std::string& size);

std::string usage_text();

}  // namespace transformer::bench
