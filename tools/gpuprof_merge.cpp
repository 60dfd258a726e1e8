// gpuprof-merge: the per-rank reports of one multi-process run, combined.
//
//   gpuprof-merge RANK0.json RANK1.json ... [-o merged.json] [--markdown]
//                 [--trace merged_trace.json] [--step-scope PATH]
//
// Prints per scope the ranks' statistics side by side with min/median/max
// across ranks, per step the skew (slowest rank minus fastest) and which rank
// was slowest how often, and, where kernels were captured, communication
// against computation (gpuprof/merge.hpp, docs/ranks.md).
// Exit status: 0, 1 when standard output could not be written, or 2 for
// bad arguments, unreadable or mismatched reports.
#include <gpuprof/merge.hpp>
#include <gpuprof_cli/arguments.hpp>
#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof/report/merged.hpp>
#include <gpuprof/report/read_json.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr const char* usage =
    "usage: gpuprof-merge REPORT.json... [-o merged.json] [--markdown] [--trace merged_trace.json]\n"
    "                     [--step-scope PATH]\n"
    "  REPORT        gpuprof reports (write_json), one per rank of one run; reports that carry\n"
    "                no rank are numbered 0, 1, ... in the order given (said on stderr)\n"
    "  -o FILE       also write the merged report as JSON (schema gpuprof.merged); default: none\n"
    "  --markdown    print GitHub markdown tables instead of plain text (default: plain text)\n"
    "  --trace FILE  write a Chrome/Perfetto trace with one set of tracks per rank; default: none\n"
    "  --step-scope PATH  the scope whose instances are the steps (default: the top-level\n"
    "                scope with the most instances)\n"
    "  -h, --help    this text\n"
    "FILE \"-\" is standard output: the tables then go to standard error. An output may not\n"
    "name an input or another output. Each option at most once.\n"
    "exit status: 0 merged; 1 standard output could not be written; 2 bad input (unreadable\n"
    "files, the same rank twice, different world sizes, an unusable output path)\n";

// Reports without ranks are numbered by merge() in the order given; say so,
// since a wrong order silently mislabels every rank.
void describe_rank_assignment(const std::vector<std::string>& files,
                              const std::vector<gpuprof::Report>& reports) {
  for (const gpuprof::Report& report : reports)
    if (report.rank.known()) return;
  std::cerr << "gpuprof-merge: the reports carry no rank; numbered in the order given:";
  for (std::size_t i = 0; i < files.size(); ++i)
    std::cerr << (i ? ", " : " ") << "rank " << i << " = " << gpuprof::terminal_safe(files[i]);
  std::cerr << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  gpuprof::MergeOptions options;
  bool markdown = false;
  std::string json_path, trace_path;
  std::vector<std::string> files;
  const auto outputs = [&] {
    return std::vector<gpuprof::OutputFile>{{"-o", json_path}, {"--trace", trace_path}};
  };
  return gpuprof::run_tool(
      "gpuprof-merge", usage, argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) {
        if (arg == "-o") {
          json_path = args.path_of(arg);
        } else if (arg == "--trace") {
          trace_path = args.path_of(arg);
        } else if (arg == "--step-scope") {
          options.step_scope = args.value_of(arg);
        } else if (arg == "--markdown") {
          markdown = true;
        } else {
          gpuprof::reject_option(arg);
          files.push_back(arg);
        }
      },
      [&] {
        if (files.empty()) throw gpuprof::Error("expected at least one report");
        gpuprof::check_output_files(outputs(), files);
      },
      [&] {
        std::vector<gpuprof::Report> reports;
        for (const std::string& file : files) reports.push_back(gpuprof::read_report_json(file));
        const gpuprof::MergedReport merged = gpuprof::merge(reports, options);
        describe_rank_assignment(files, reports);
        if (!json_path.empty()) gpuprof::write_json(merged, json_path);
        if (!trace_path.empty()) gpuprof::write_chrome_trace(merged, reports, trace_path);
        std::ostream& tables = gpuprof::any_to_standard_output(outputs()) ? std::cerr : std::cout;
        tables << (markdown ? gpuprof::to_markdown(merged) : gpuprof::to_table(merged));
        return 0;
      });
}
