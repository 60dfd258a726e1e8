// gpuprof-compare: two runs side by side, a verdict per row.
//
//   gpuprof-compare BASE.json NEW.json [--threshold 5%] [--alpha 0.05]
//                   [--min-samples 5] [--markdown] [--strict]
//
// Reads gpuprof reports or gpuprof.bench files (both files of one kind),
// matches rows and prints the comparison
// (gpuprof/compare.hpp says how the verdict is reached).
// Exit status: 0, or 1 when some row got slower beyond the threshold (so CI
// can gate on it) or, with --strict, when some row is noisy (a change that
// could not be told from noise), or 2 for bad arguments or unreadable files.
#include <gpuprof/compare.hpp>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "arguments.hpp"

namespace {

constexpr const char* usage =
    "usage: gpuprof-compare BASE.json NEW.json [--threshold 5%] [--alpha 0.05] [--min-samples 5] "
    "[--markdown] [--strict]\n"
    "  BASE, NEW      two files of one kind: gpuprof reports (write_json) or gpuprof.bench files\n"
    "                 (write_bench_json)\n"
    "  --threshold F  relative change still called \"same\": a percentage (5%) or a ratio (0.05),\n"
    "                 plain decimals from 0 to 100% (a bare 5 is refused: write 5%) (default 5%)\n"
    "  --alpha F      significance level of the test, written like --threshold, in (0, 1)\n"
    "                 (default 0.05)\n"
    "  --min-samples N  fewer samples on a side make a row \"noisy\" (default 5)\n"
    "  --markdown     print a GitHub markdown table instead of plain text (default: plain text)\n"
    "  --strict       exit 1 also when a row is \"noisy\" (its change could not be told from noise)\n"
    "  -h, --help     this text\n"
    "Each option at most once. The comparison goes to standard output.\n"
    "exit status: 0 no row slower; 1 a row got slower beyond the threshold (with --strict: or is\n"
    "noisy), or standard output could not be written; 2 bad arguments or unreadable files\n";

}  // namespace

int main(int argc, char** argv) {
  gpuprof::CompareOptions options;
  bool markdown = false;
  bool strict = false;
  std::vector<std::string> files;
  return gpuprof_tools::run_tool(
      "gpuprof-compare", usage, argc, argv,
      [&](gpuprof_tools::Arguments& args, const std::string& arg) {
        if (arg == "--threshold") {
          options.threshold = gpuprof_tools::parse_fraction(args.value_of(arg), arg);
        } else if (arg == "--alpha") {
          options.alpha = gpuprof_tools::parse_fraction(args.value_of(arg), arg);
        } else if (arg == "--min-samples") {
          options.min_samples = gpuprof_tools::parse_count(args.value_of(arg), arg);
        } else if (arg == "--markdown") {
          markdown = true;
        } else if (arg == "--strict") {
          strict = true;
        } else {
          gpuprof_tools::reject_option(arg);
          files.push_back(arg);
        }
      },
      [&] {
        if (files.size() != 2) throw gpuprof::Error("expected two files, BASE.json and NEW.json");
        if (!(options.alpha > 0 && options.alpha < 1)) throw gpuprof::Error("--alpha must be in (0, 1)");
      },
      [&] {
        const gpuprof::Comparison comparison = gpuprof::compare_runs(
            gpuprof::read_measured_run(files[0]), gpuprof::read_measured_run(files[1]), options);
        std::cout << (markdown ? gpuprof::comparison_markdown(comparison)
                               : gpuprof::comparison_text(comparison));
        return comparison.regressed() || (strict && comparison.inconclusive()) ? 1 : 0;
      });
}
