// What gpuprof-merge reads: a JSON array of reports (the per-rank files, one
// document so that one input holds them all), merged (merge.hpp) and printed
// as text, markdown, merged JSON and a merged Chrome trace.
#include <gpuprof/merge.hpp>
#include <gpuprof/report/merged.hpp>
#include <gpuprof/report/read_json.hpp>

#include <vector>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string trace_path = gpuprof_fuzz::scratch_file("merged_trace.json");
  return gpuprof_fuzz::run([&] {
    const gpuprof::detail::Json documents = gpuprof::detail::parse_json(gpuprof_fuzz::text_of(data, size));
    std::vector<gpuprof::Report> reports;
    for (const gpuprof::detail::Json& document : documents.elements())
      reports.push_back(gpuprof::detail::report_from_json(document));
    if (reports.empty()) return;
    const gpuprof::MergedReport merged = gpuprof::merge(reports);
    (void)gpuprof::to_table(merged);
    (void)gpuprof::to_markdown(merged);
    (void)gpuprof::to_json(merged);
    gpuprof::write_chrome_trace(merged, reports, trace_path);
  });
}
