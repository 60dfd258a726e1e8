// gpuprof-report: a gpuprof report (JSON) as one self-contained HTML page.
//
//   gpuprof-report REPORT.json -o report.html [--title "my run"]
//
// Exit status: 0, or 2 for bad arguments, an unreadable report or an
// unwritable output (nothing is left half-written).
#include <gpuprof/report/html.hpp>
#include <gpuprof/report/read_json.hpp>

#include <iostream>
#include <string>

#include "arguments.hpp"

namespace {
constexpr const char* usage =
    "usage: gpuprof-report REPORT.json -o report.html [--title TEXT]\n"
    "  REPORT.json: a gpuprof report (Report::write_json)\n"
    "  -o FILE      the HTML page to write (self-contained: open it in any browser)\n";
}  // namespace

int main(int argc, char** argv) {
  std::string input, output, title = "gpuprof report";
  try {
    gpuprof_tools::Arguments args(argc, argv);
    while (args.more()) {
      const std::string arg = args.next();
      if (arg == "-h" || arg == "--help") {
        std::cout << usage;
        return 0;
      } else if (arg == "-o" || arg == "--output") {
        output = args.value_of(arg);
      } else if (arg == "--title") {
        title = args.value_of(arg);
      } else if (!arg.empty() && arg[0] == '-') {
        throw gpuprof::Error("unknown option " + arg);
      } else if (input.empty()) {
        input = arg;
      } else {
        throw gpuprof::Error("one report at a time (got " + input + " and " + arg + ")");
      }
    }
    if (input.empty() || output.empty()) throw gpuprof::Error("needs REPORT.json and -o report.html");
  } catch (const gpuprof::Error& error) {
    std::cerr << "gpuprof-report: " << error.what() << "\n" << usage;
    return 2;
  }
  try {
    gpuprof::write_html(gpuprof::read_report_json(input), output, title);
    return 0;
  } catch (const gpuprof::Error& error) {
    std::cerr << "gpuprof-report: " << error.what() << "\n";
    return 2;
  }
}
