// The writers, held to the size of what they print: a report from the
// fuzzer's bytes (report/read_json.hpp), then the table, markdown, HTML,
// SVG pictures, CSV and Chrome trace of it, and the merge of it with a copy
// as a second rank (text, markdown, JSON, trace). A writer whose output
// grows faster than its input (a name repeated once per level of depth, a
// column padded to one huge cell) aborts the run: that is a finding.
#include <gpuprof/merge.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/chrome_trace.hpp>
#include <gpuprof/report/csv.hpp>
#include <gpuprof/report/html.hpp>
#include <gpuprof/report/memory_timeline_svg.hpp>
#include <gpuprof/report/merged.hpp>
#include <gpuprof/report/read_json.hpp>
#include <gpuprof/report/roofline_svg.hpp>

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "fuzz_target.hpp"

namespace {

// Every writer's output together may be this many times the input, plus
// a fixed allowance for the page's script and style and the pictures' frames.
constexpr std::size_t bytes_per_input_byte = 64;
constexpr std::size_t fixed_allowance = 512 * 1024;

std::size_t file_size(const std::string& path) {
  struct stat status {};
  return ::stat(path.c_str(), &status) == 0 ? static_cast<std::size_t>(status.st_size) : 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string trace_path = gpuprof_fuzz::scratch_file("writers_trace.json");
  static const std::string csv_path = gpuprof_fuzz::scratch_file("writers.csv");
  static const std::string merged_trace_path = gpuprof_fuzz::scratch_file("writers_merged_trace.json");
  return gpuprof_fuzz::run([&] {
    const gpuprof::Report report =
        gpuprof::detail::report_from_json(gpuprof::detail::parse_json(gpuprof_fuzz::text_of(data, size)));
    std::size_t written = 0;
    std::ostringstream table;
    gpuprof::print_table(report, table);
    written += table.str().size();
    written += gpuprof::to_markdown(report).size();
    written += gpuprof::to_html(report).size();
    written += gpuprof::to_memory_timeline_svg(report.memory_timeline).size();
    written += gpuprof::to_roofline_svg(report).size();
    gpuprof::write_csv(report, csv_path);
    written += file_size(csv_path);
    gpuprof::write_chrome_trace(report, trace_path);
    written += file_size(trace_path);

    // The same report as ranks 0 and 1 of a world of two.
    std::vector<gpuprof::Report> ranks = {report, report};
    for (int rank = 0; rank < 2; ++rank) ranks[static_cast<std::size_t>(rank)].rank = {rank, 2, -1};
    const gpuprof::MergedReport merged = gpuprof::merge(ranks);
    written += gpuprof::to_table(merged).size() + gpuprof::to_markdown(merged).size() +
               gpuprof::to_json(merged).size();
    gpuprof::write_chrome_trace(merged, ranks, merged_trace_path);
    written += file_size(merged_trace_path);

    if (written > bytes_per_input_byte * size + fixed_allowance) {
      std::fprintf(stderr, "writers_fuzz: %zu bytes written from %zu bytes of input\n", written, size);
      std::abort();
    }
  });
}
