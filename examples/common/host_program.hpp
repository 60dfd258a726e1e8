// common/host_program.hpp: the command line and exit statuses of the examples
// that time host work (quickstart, axes): --quick, --json PATH and the
// program's own flags, each at most once; --help or -h prints the usage
// (exit 0); a bad command line prints the error and the usage (exit 2); an
// exception from the run is a message (exit 1), as is standard output that
// could not be written.
#pragma once
#include <exception>
#include <iostream>
#include <string>

#include <gpuprof/error.hpp>
#include <gpuprof/terminal_text.hpp>
#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof_cli/standard_output.hpp>

namespace examples {

struct HostFlags {
  bool quick = false;
  std::string json_path;  // "" when --json is not given
};

// `own_flag(arg, i)` takes a flag of the program's own (reading its value at
// argv[++i]) and returns true, or returns false for one it does not know. The
// --json path is checked before any work.
template <class OwnFlag>
HostFlags parse_host_flags(int argc, char** argv, OwnFlag own_flag) {
  HostFlags flags;
  bool json_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick" && !flags.quick) {
      flags.quick = true;
    } else if (arg == "--json" && !json_given) {
      if (i + 1 == argc) throw gpuprof::Error("--json needs a path");
      flags.json_path = argv[++i];
      json_given = true;
      if (flags.json_path.empty()) throw gpuprof::Error("--json '': an empty path names no file");
    } else if (arg == "--quick" || arg == "--json") {
      throw gpuprof::Error(arg + " given twice");
    } else if (!own_flag(arg, i)) {  // a typo must not run silently
      throw gpuprof::Error("unknown argument '" + arg + "'");
    }
  }
  gpuprof::check_output_files({{"--json", flags.json_path}});
  return flags;
}

// `parse(argc, argv)` gives the options, `run(options, text)` does the work and
// returns the exit status; `text` is where tables go (standard error when the
// JSON goes to standard output).
template <class Parse, class Run>
int host_program_main(const char* program, const char* usage, int argc, char** argv, Parse parse, Run run) {
  gpuprof::guard_standard_streams();
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--help" || std::string(argv[i]) == "-h") {
      std::cout << usage;
      return gpuprof::finish_standard_output(program, 0);
    }
  decltype(parse(argc, argv)) options;
  try {
    options = parse(argc, argv);
  } catch (const gpuprof::Error& error) {
    std::cerr << program << ": " << gpuprof::terminal_safe(error.what()) << "\n" << usage;
    return 2;
  }
  try {
    std::ostream& text = options.json_path == "-" ? std::cerr : std::cout;
    return gpuprof::finish_standard_output(program, run(options, text));
  } catch (const std::exception& error) {  // e.g. an unwritable --json path: a message, not a terminate()
    std::cerr << program << ": " << gpuprof::terminal_safe(error.what()) << "\n";
    return 1;
  }
}

}  // namespace examples
