// cli.cpp: argument parsing and the GPU availability check of the demos.
#include "cli.hpp"

#include <charconv>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string_view>

#include <gpuprof/terminal_text.hpp>
#include <gpuprof/device.hpp>
#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof_cli/standard_output.hpp>

#include "gpu.hpp"

namespace precision {

ProgramOptions parse_options(int argc, const char* const* argv, bool accepts_seed) {
  ProgramOptions options;
  std::set<std::string_view> given;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    if (!given.insert(argument).second) throw std::invalid_argument(std::string(argument) + " given twice");
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw std::invalid_argument(std::string(argument) + " needs a value");
      return argv[++i];
    };
    if (argument == "--help" || argument == "-h") {
      options.help = true;
    } else if (argument == "--json") {
      options.json_path = std::string(value());
      if (options.json_path->empty()) throw std::invalid_argument("--json '': an empty path names no file");
    } else if (argument == "--seed" && accepts_seed) {
      const std::string_view text = value();
      const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), options.seed);
      if (status != std::errc() || end != text.data() + text.size())
        throw std::invalid_argument("--seed needs a non-negative integer, not '" + std::string(text) + "'");
    } else {
      throw std::invalid_argument("unknown argument '" + std::string(argument) + "'");
    }
  }
  return options;
}

std::string usage(const std::string& program, bool accepts_seed) {
  return "usage: " + program + (accepts_seed ? " [--seed N]" : "") +
         " [--json PATH]\n"
         "  --json PATH  also write the tables as JSON to PATH (whole file or nothing; default:\n"
         "               no file); \"-\" is standard output, and the tables then go to stderr\n" +
         (accepts_seed ? "  --seed N     random inputs and parameters (default 2025)\n" : "") +
         "  -h, --help   this text\n"
         "Each option at most once.\n"
         "exit status: 0 done; 1 a failure (an output, standard output included, could not be\n"
         "written); 2 bad arguments\n";
}

ParsedCommandLine parse_command_line(const std::string& program, int argc, const char* const* argv,
                                     bool accepts_seed) {
  ParsedCommandLine parsed;
  try {
    parsed.options = parse_options(argc, argv, accepts_seed);
    // Before any work: the path must be writable and not a directory.
    if (parsed.options.json_path) gpuprof::check_output_files({{"--json", *parsed.options.json_path}});
  } catch (const std::exception& error) {
    std::cerr << program << ": " << gpuprof::terminal_safe(error.what()) << '\n'
              << usage(program, accepts_seed);
    parsed.exit_status = 2;
    return parsed;
  }
  if (parsed.options.help) {
    std::cout << usage(program, accepts_seed);
    parsed.exit_status = gpuprof::finish_standard_output(program.c_str(), 0);
  }
  return parsed;
}

std::optional<std::string> gpu_rows_unavailable() {
#if PRECISION_WITH_CUDA
  const gpuprof::DeviceStatus device = gpuprof::device_status();
  if (!device.usable) return device.reason;
  return missing_device_code();
#else
  return std::string("built without CUDA");
#endif
}

}  // namespace precision
