// cli.hpp: the command line both demo programs share, and the line they
// print when the GPU rows cannot run.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace precision {

struct ProgramOptions {
  std::optional<std::string> json_path;  // --json PATH
  std::uint64_t seed = 2025;             // --seed N (toy model only)
};

// A demo's main(): its command line taken by gpuprof::run_tool
// (gpuprof_cli/arguments.hpp), so --help, the errors and the exit statuses
// are the tools' own; --seed only where `accepts_seed`. `run(options, out)`
// does the work and returns the exit status; `out` is where the tables go
// (standard error when the JSON goes to standard output).
int run_demo(const char* program, bool accepts_seed, int argc, char** argv,
             const std::function<int(const ProgramOptions&, std::ostream&)>& run);

// Why the GPU rows are not run in this process, or nullopt when they can be
// (a CUDA build, a usable device, and device code built for it).
std::optional<std::string> gpu_rows_unavailable();

}  // namespace precision
