// gpuprof-merge: the per-rank reports of one multi-process run, combined.
//
//   gpuprof-merge RANK0.json RANK1.json ... [-o merged.json] [--markdown]
//                 [--trace merged_trace.json] [--step-scope PATH]
//
// Prints per scope the ranks' statistics side by side with min/median/max
// across ranks, per step the skew (slowest rank minus fastest) and which rank
// was slowest how often, and, where kernels were captured, communication
// against computation (gpuprof/merge.hpp, docs/ranks.md).
// Exit status: 0, or 2 for bad arguments, unreadable or mismatched reports.
#include <gpuprof/merge.hpp>
#include <gpuprof/report/merged.hpp>
#include <gpuprof/report/read_json.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "arguments.hpp"

namespace {

constexpr const char* usage =
    "usage: gpuprof-merge REPORT.json... [-o merged.json] [--markdown] [--trace merged_trace.json]\n"
    "                     [--step-scope PATH]\n"
    "  REPORT        gpuprof reports (write_json), one per rank of one run\n"
    "  -o            also write the merged report as JSON (schema gpuprof.merged)\n"
    "  --markdown    print GitHub markdown tables instead of plain text\n"
    "  --trace       write a Chrome/Perfetto trace with one set of tracks per rank\n"
    "  --step-scope  the scope whose instances are the steps (default: the top-level\n"
    "                scope with the most instances)\n"
    "exit status: 0; 2 on bad input (unreadable files, the same rank twice, different world sizes)\n";

}  // namespace

int main(int argc, char** argv) {
  gpuprof::MergeOptions options;
  bool markdown = false;
  std::string json_path, trace_path;
  std::vector<std::string> files;
  return gpuprof_tools::run_tool(
      "gpuprof-merge", usage, argc, argv,
      [&](gpuprof_tools::Arguments& args, const std::string& arg) {
        if (arg == "-o") {
          json_path = args.value_of(arg);
        } else if (arg == "--trace") {
          trace_path = args.value_of(arg);
        } else if (arg == "--step-scope") {
          options.step_scope = args.value_of(arg);
        } else if (arg == "--markdown") {
          markdown = true;
        } else {
          gpuprof_tools::reject_option(arg);
          files.push_back(arg);
        }
      },
      [&] {
        if (files.empty()) throw gpuprof::Error("expected at least one report");
      },
      [&] {
        std::vector<gpuprof::Report> reports;
        for (const std::string& file : files) reports.push_back(gpuprof::read_report_json(file));
        const gpuprof::MergedReport merged = gpuprof::merge(reports, options);
        if (!json_path.empty()) gpuprof::write_merged_json(merged, json_path);
        if (!trace_path.empty()) gpuprof::write_merged_chrome_trace(reports, merged, trace_path);
        std::cout << (markdown ? gpuprof::merged_markdown(merged) : gpuprof::merged_text(merged));
        return 0;
      });
}
