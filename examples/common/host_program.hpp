// common/host_program.hpp: the flags the examples that time host work
// (quickstart, axes) share, --quick and --json PATH, taken inside
// gpuprof::run_tool (gpuprof_cli/arguments.hpp), which gives them the tools'
// --help, error wording and exit statuses.
#pragma once
#include <iostream>
#include <string>

#include <gpuprof_cli/arguments.hpp>
#include <gpuprof_cli/output_paths.hpp>

namespace examples {

struct HostFlags {
  bool quick = false;
  std::string json_path;  // "" when --json is not given

  // Takes --quick or --json PATH and returns true; false for any other argument.
  bool take(gpuprof::Arguments& args, const std::string& arg) {
    if (arg == "--quick") quick = true;
    else if (arg == "--json") json_path = args.path_of(arg);
    else return false;
    return true;
  }
  // Before any work: the --json path can be written.
  void check() const { gpuprof::check_output_files({{"--json", json_path}}); }
  // Where the tables go: standard error when the JSON goes to standard output.
  std::ostream& text() const { return json_path == "-" ? std::cerr : std::cout; }
};

}  // namespace examples
