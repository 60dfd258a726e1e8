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
  return gpuprof_tools::run_tool(
      "gpuprof-report", usage, argc, argv,
      [&](gpuprof_tools::Arguments& args, const std::string& arg) {
        if (arg == "-o" || arg == "--output") {
          output = args.value_of(arg);
        } else if (arg == "--title") {
          title = args.value_of(arg);
        } else {
          gpuprof_tools::reject_option(arg);
          if (!input.empty()) throw gpuprof::Error("one report at a time (got " + input + " and " + arg + ")");
          input = arg;
        }
      },
      [&] {
        if (input.empty() || output.empty()) throw gpuprof::Error("needs REPORT.json and -o report.html");
      },
      [&] {
        gpuprof::write_html(gpuprof::read_report_json(input), output, title);
        return 0;
      });
}
