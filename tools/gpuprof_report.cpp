// gpuprof-report: a gpuprof report (JSON) as one self-contained HTML page.
//
//   gpuprof-report REPORT.json -o report.html [--title "my run"]
//
// Exit status: 0, 1 when standard output could not be written, or 2 for bad
// arguments, an unreadable report or an unwritable output (nothing is left
// half-written).
#include <gpuprof/json_writer.hpp>
#include <gpuprof/output_paths.hpp>
#include <gpuprof/report/html.hpp>
#include <gpuprof/report/read_json.hpp>

#include <iostream>
#include <string>

#include "arguments.hpp"

namespace {
constexpr const char* usage =
    "usage: gpuprof-report REPORT.json -o report.html [--title TEXT]\n"
    "  REPORT.json   a gpuprof report (gpuprof::write_json)\n"
    "  -o FILE       the HTML page to write (self-contained: open it in any browser);\n"
    "                \"-\" writes it to standard output. Required; may not name the report\n"
    "  --title TEXT  the page's title and heading, UTF-8 (default: \"gpuprof report\")\n"
    "  -h, --help    this text\n"
    "On success one line on standard error says what was written. Each option at most once.\n"
    "exit status: 0 written; 1 standard output could not be written; 2 bad arguments, an\n"
    "unreadable report or an unwritable output (nothing is left half-written)\n";

// The page declares UTF-8; bytes that are not would show as mojibake or be
// replaced by the browser, so a title that is not UTF-8 is refused.
void check_utf8(const std::string& text, const std::string& option) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = gpuprof::detail::utf8_sequence_length(text, at);
    if (length == 0) throw gpuprof::Error(option + ": not valid UTF-8 (byte " + std::to_string(at) + ")");
    at += length;
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::string input, output, title = "gpuprof report";
  return gpuprof_tools::run_tool(
      "gpuprof-report", usage, argc, argv,
      [&](gpuprof_tools::Arguments& args, const std::string& arg) {
        if (arg == "-o" || arg == "--output") {
          if (!output.empty()) throw gpuprof::Error("-o and --output given together");
          output = args.path_of(arg);
        } else if (arg == "--title") {
          title = args.value_of(arg);
          check_utf8(title, arg);
        } else {
          gpuprof_tools::reject_option(arg);
          if (!input.empty())
            throw gpuprof::Error("one report at a time (got " + input + " and " + arg + ")");
          input = arg;
        }
      },
      [&] {
        if (input.empty() || output.empty()) throw gpuprof::Error("needs REPORT.json and -o report.html");
        gpuprof::check_output_files({{"-o", output}}, {input});
      },
      [&] {
        const gpuprof::Report report = gpuprof::read_report_json(input);
        gpuprof::write_html(report, output, title);
        std::cerr << "gpuprof-report: wrote " << (output == "-" ? "standard output" : output) << " ("
                  << report.nodes.size() << " scopes from " << input << ")\n";
        return 0;
      });
}
