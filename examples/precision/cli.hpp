// cli.hpp: the command line both demo programs share, and the line they
// print when the GPU rows cannot run.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace precision {

struct ProgramOptions {
  std::optional<std::string> json_path;  // --json PATH
  std::uint64_t seed = 2025;             // --seed N (toy model only)
  bool help = false;                     // --help
};

// Throws std::invalid_argument with a message fit for the user on an
// unknown option, a missing value or a malformed number.
ProgramOptions parse_options(int argc, const char* const* argv, bool accepts_seed);
std::string usage(const std::string& program, bool accepts_seed);

// What a program's main() does with its arguments: the parsed options, or
// the exit status when it is done already (0 after --help, 2 after a bad
// argument, with the message and the usage on stderr).
struct ParsedCommandLine {
  ProgramOptions options;
  std::optional<int> exit_status;
};
ParsedCommandLine parse_command_line(const std::string& program, int argc, const char* const* argv,
                                     bool accepts_seed);

// Why the GPU rows are not run in this process, or nullopt when they can be
// (a CUDA build, a usable device, and device code built for it).
std::optional<std::string> gpu_rows_unavailable();

}  // namespace precision
