// gpuprof-report: a gpuprof report (JSON) as one self-contained HTML page,
// and its hardware counters as a roofline picture (SVG).
//
//   gpuprof-report REPORT.json -o report.html [--title "my run"]
//   gpuprof-report REPORT.json --roofline roofline.svg
//
// Exit status: 0, 1 when standard output could not be written, or 2 for bad
// arguments, an unreadable report or an unwritable output (nothing is left
// half-written).
#include <gpuprof/json_writer.hpp>
#include <gpuprof_cli/arguments.hpp>
#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof/report/html.hpp>
#include <gpuprof/report/read_json.hpp>
#include <gpuprof/report/roofline_svg.hpp>

#include <iostream>
#include <string>

namespace {
constexpr const char* usage =
    "usage: gpuprof-report REPORT.json [-o report.html] [--roofline roofline.svg] [--title TEXT]\n"
    "  REPORT.json     a gpuprof report (gpuprof::write_json)\n"
    "  -o FILE         the HTML page to write (self-contained: open it in any browser);\n"
    "                  \"-\" writes it to standard output. May not name the report\n"
    "  --roofline FILE the report's hardware counters as a roofline picture (SVG); the\n"
    "                  report must hold counters (gpuprof::CounterCapture)\n"
    "  --title TEXT    the page's or picture's title, UTF-8 (default: \"gpuprof report\"\n"
    "                  for the page, \"Roofline\" for the picture)\n"
    "  -h, --help      this text\n"
    "At least one of -o and --roofline.\n"
    "On success one line on standard error says what was written. Each option at most once.\n"
    "exit status: 0 written; 1 standard output could not be written; 2 bad arguments, an\n"
    "unreadable report or an unwritable output (nothing is left half-written)\n";

// The page declares UTF-8; bytes that are not would show as mojibake or be
// replaced by the browser, so a title that is not UTF-8 is refused.
void check_utf8(const std::string& text, const std::string& option) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = gpuprof::utf8_sequence_length(text, at);
    if (length == 0) throw gpuprof::Error(option + ": not valid UTF-8 (byte " + std::to_string(at) + ")");
    at += length;
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::string input, output, roofline, title;
  return gpuprof::run_tool(
      "gpuprof-report", usage, argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) {
        if (arg == "-o" || arg == "--output") {
          if (!output.empty()) throw gpuprof::Error("-o and --output given together");
          output = args.path_of(arg);
        } else if (arg == "--roofline") {
          roofline = args.path_of(arg);
        } else if (arg == "--title") {
          title = args.value_of(arg);
          check_utf8(title, arg);
        } else {
          gpuprof::reject_option(arg);
          if (!input.empty())
            throw gpuprof::Error("one report at a time (got " + input + " and " + arg + ")");
          input = arg;
        }
      },
      [&] {
        if (input.empty() || (output.empty() && roofline.empty()))
          throw gpuprof::Error("needs REPORT.json and -o report.html or --roofline roofline.svg");
        gpuprof::check_output_files({{"-o", output}, {"--roofline", roofline}}, {input});
      },
      [&] {
        const gpuprof::Report report = gpuprof::read_report_json(input);
        if (!roofline.empty() && report.counters.empty())
          throw gpuprof::Error(input + " holds no hardware counters: no roofline to draw (--roofline)");
        const auto written = [&](const std::string& path) {
          std::cerr << "gpuprof-report: wrote "
                    << (path == "-" ? "standard output" : gpuprof::terminal_safe(path)) << " ("
                    << report.nodes.size() << " scopes from " << gpuprof::terminal_safe(input) << ")\n";
        };
        if (!output.empty()) {
          gpuprof::write_html(report, output, {title.empty() ? "gpuprof report" : title});
          written(output);
        }
        if (!roofline.empty()) {
          gpuprof::RooflineSvgOptions picture;
          if (!title.empty()) picture.title = title;
          gpuprof::write_roofline_svg(report, roofline, picture);
          written(roofline);
        }
        return 0;
      });
}
