// gpuprof-compare: two runs side by side, a verdict per row.
//
//   gpuprof-compare BASE.json NEW.json [--threshold 5%] [--alpha 0.05]
//                   [--min-samples 5] [--markdown] [--strict]
//                   [--reference-sm-mhz MHZ] [--keep-throttled]
//   gpuprof-compare --run [--rounds 5] --base 'CMD {out}' --new 'CMD {out}'
//                   [--keep DIR] [same options]
//
// Reads gpuprof reports or gpuprof.bench files (both files of one kind),
// matches rows and prints the comparison (gpuprof/compare.hpp says how the
// verdict of one pair is reached). With --run it makes the files itself:
// the two commands alternate for N rounds (interleaved_runs.hpp) and the
// verdict comes from the runs' medians (gpuprof/compare_rounds.hpp).
// gpuprof.bench rows lose the samples taken while the GPU was throttled
// (gpuprof/clock_rule.hpp), or with --reference-sm-mhz are scaled to that SM
// clock; the warnings before the table count them and say once when the
// clocks were not locked.
// Exit status: 0, or 1 when some row got slower beyond the threshold (so CI
// can gate on it) or, with --strict, when some row is noisy (a change that
// could not be told from noise), or 2 for bad arguments or unreadable files.
#include <gpuprof/compare.hpp>
#include <gpuprof/report/read_bench_json.hpp>
#include <gpuprof/compare_rounds.hpp>
#include <gpuprof_cli/arguments.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "interleaved_runs.hpp"

namespace {

constexpr const char* usage =
    "usage: gpuprof-compare BASE.json NEW.json [--threshold 5%] [--alpha 0.05] [--min-samples 5] "
    "[--markdown] [--strict]\n"
    "                       [--reference-sm-mhz MHZ] [--keep-throttled]\n"
    "       gpuprof-compare --run [--rounds N] --base 'CMD' --new 'CMD' [--keep DIR] [options above]\n"
    "  BASE, NEW      two files of one kind: gpuprof reports (write_json) or gpuprof.bench files\n"
    "                 (write_bench_json); one pair: a row either side finds unstable is \"noisy\"\n"
    "  --run          run the two commands alternately (ABBA order) for N rounds and judge each row\n"
    "                 by the runs' medians: a paired t test on the rounds, ratio with its interval\n"
    "  --base, --new CMD  shell commands (run with /bin/sh -c) that each write one gpuprof report or\n"
    "                 gpuprof.bench file to {out}, which gpuprof-compare replaces with a quoted\n"
    "                 path of its own, e.g. --base './quickstart --json {out}'\n"
    "  --rounds N     rounds of one run per side, at least 2 (default 5)\n"
    "  --keep DIR     keep every run's file as DIR/base-1.json, DIR/new-1.json, ... (made if\n"
    "                 missing; default: nothing kept)\n"
    "  --threshold F  relative change still called \"same\": a percentage (5%) or a ratio (0.05),\n"
    "                 plain decimals from 0 to 100% (a bare 5 is refused: write 5%) (default 5%)\n"
    "  --alpha F      significance level of the test, written like --threshold, in (0, 1)\n"
    "                 (default 0.05)\n"
    "  --min-samples N  fewer samples on a side make a row \"noisy\" (default 5; one pair only)\n"
    "  --markdown     print a GitHub markdown table instead of plain text (default: plain text)\n"
    "  --strict       exit 1 also when a row is \"noisy\" (its change could not be told from noise)\n"
    "  --reference-sm-mhz MHZ  gpuprof.bench rows scaled to this SM clock (times x the median SM\n"
    "                 clock of the row's samples / MHZ), so work slowed only by a lower clock is not\n"
    "                 called slower (default: times as measured)\n"
    "  --keep-throttled  keep gpuprof.bench samples the GPU took while throttled (default: left out\n"
    "                 and counted, unless every sample of a row was)\n"
    "  -h, --help     this text\n"
    "Each option at most once. The comparison goes to standard output.\n"
    "exit status: 0 no row slower; 1 a row got slower beyond the threshold (with --strict: or is\n"
    "noisy), or standard output could not be written; 2 bad arguments or unreadable files, or\n"
    "(--run) a command that failed or wrote no readable file (its standard error is shown)\n";

// --keep DIR: made when missing, and writable, before any command runs.
void prepare_keep_folder(const std::string& folder) {
  if (mkdir(folder.c_str(), 0777) != 0 && errno != EEXIST)
    throw gpuprof::Error("--keep " + folder + ": cannot make the folder: " + std::strerror(errno));
  struct stat status {};
  if (stat(folder.c_str(), &status) != 0 || !S_ISDIR(status.st_mode))
    throw gpuprof::Error("--keep " + folder + ": not a folder");
  if (access(folder.c_str(), W_OK | X_OK) != 0)
    throw gpuprof::Error("--keep " + folder + ": cannot write there: " + std::strerror(errno));
}

}  // namespace

int main(int argc, char** argv) {
  gpuprof::CompareOptions options;
  gpuprof::ClockRule clock_rule;
  bool markdown = false;
  bool strict = false;
  bool run = false;
  std::size_t rounds = 5;
  std::string base_command, new_command, keep_folder;
  std::vector<std::string> files, run_options;
  return gpuprof::run_tool(
      "gpuprof-compare", usage, argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) {
        if (arg == "--threshold") {
          options.threshold = gpuprof::parse_fraction(args.value_of(arg), arg);
        } else if (arg == "--alpha") {
          options.alpha = gpuprof::parse_fraction(args.value_of(arg), arg);
        } else if (arg == "--min-samples") {
          options.min_samples = gpuprof::parse_count(args.value_of(arg), arg);
        } else if (arg == "--markdown") {
          markdown = true;
        } else if (arg == "--strict") {
          strict = true;
        } else if (arg == "--reference-sm-mhz") {
          const std::size_t mhz = gpuprof::parse_count(args.value_of(arg), arg);
          if (mhz == 0 || mhz > 100'000)
            throw gpuprof::Error("--reference-sm-mhz wants an SM clock in MHz, 1 to 100000");
          clock_rule.reference_sm_mhz = static_cast<int>(mhz);
        } else if (arg == "--keep-throttled") {
          clock_rule.leave_out_throttled = false;
        } else if (arg == "--run") {
          run = true;
        } else if (arg == "--rounds") {
          rounds = gpuprof::parse_count(args.value_of(arg), arg);
          run_options.push_back(arg);
        } else if (arg == "--base" || arg == "--new") {
          (arg == "--base" ? base_command : new_command) = args.value_of(arg);
          run_options.push_back(arg);
        } else if (arg == "--keep") {
          keep_folder = args.path_of(arg);
          run_options.push_back(arg);
        } else {
          gpuprof::reject_option(arg);
          files.push_back(arg);
        }
      },
      [&] {
        if (!(options.alpha > 0 && options.alpha < 1)) throw gpuprof::Error("--alpha must be in (0, 1)");
        if (!run) {
          if (!run_options.empty()) throw gpuprof::Error(run_options.front() + " needs --run");
          if (files.size() != 2) throw gpuprof::Error("expected two files, BASE.json and NEW.json");
          return;
        }
        if (!files.empty()) throw gpuprof::Error("--run makes its own files: no BASE.json NEW.json");
        if (rounds < 2)
          throw gpuprof::Error("--rounds must be at least 2 (one round shows no run-to-run spread)");
        for (const auto& [name, command] :
             {std::pair<const char*, const std::string&>("--base", base_command),
              std::pair<const char*, const std::string&>("--new", new_command)})
          if (command.find("{out}") == std::string::npos)
            throw gpuprof::Error(std::string(name) +
                                 " needs a command that writes to {out}, e.g. './bench --json {out}'");
        if (!keep_folder.empty()) prepare_keep_folder(keep_folder);
      },
      [&] {
        gpuprof::Comparison comparison;
        if (run) {
          const gpuprof_tools::InterleavedRuns runs =
              gpuprof_tools::run_interleaved(base_command, new_command, rounds, keep_folder, clock_rule);
          comparison = gpuprof::compare_rounds(runs.base, runs.next, options);
        } else {
          comparison = gpuprof::compare_runs(gpuprof::read_measured_run(files[0], clock_rule),
                                             gpuprof::read_measured_run(files[1], clock_rule), options);
        }
        std::cout << (markdown ? gpuprof::to_markdown(comparison) : gpuprof::to_table(comparison));
        return comparison.regressed() || (strict && comparison.inconclusive()) ? 1 : 0;
      });
}
