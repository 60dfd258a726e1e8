// cli.cpp: the command line and the GPU availability check of the demos.
#include "cli.hpp"

#include <charconv>
#include <iostream>

#include <gpuprof/device.hpp>
#include <gpuprof_cli/arguments.hpp>
#include <gpuprof_cli/output_paths.hpp>

#include "gpu.hpp"

namespace precision {
namespace {

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

// Any 64-bit value, 0 included (parse_count takes only counts from 1).
std::uint64_t parse_seed(const std::string& text) {
  std::uint64_t seed = 0;
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), seed);
  if (status != std::errc() || end != text.data() + text.size())
    throw gpuprof::Error("--seed needs a non-negative integer, not '" + text + "'");
  return seed;
}

}  // namespace

int run_demo(const char* program, bool accepts_seed, int argc, char** argv,
             const std::function<int(const ProgramOptions&, std::ostream&)>& run) {
  ProgramOptions options;
  const std::string help = usage(program, accepts_seed);
  return gpuprof::run_tool(
      program, help.c_str(), argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) {
        if (arg == "--json") options.json_path = args.path_of(arg);
        else if (arg == "--seed" && accepts_seed) options.seed = parse_seed(args.value_of(arg));
        else gpuprof::reject_argument(arg);
      },
      [&] {  // before any work: the path must be writable and not a directory
        if (options.json_path) gpuprof::check_output_files({{"--json", *options.json_path}});
      },
      gpuprof::run_reading_no_input(
          [&] { return run(options, options.json_path == "-" ? std::cerr : std::cout); }));
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
