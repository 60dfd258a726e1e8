// A gpuprof report (report/read_json.hpp), with its kernel records, memory
// timeline and hardware counters, then everything gpuprof-report and the
// library print from one: table, markdown, JSON, HTML, Chrome trace, kernel
// summaries, the memory and roofline pictures, and a comparison of the
// report with itself.
#include <gpuprof/compare.hpp>
#include <gpuprof/kernel_summary.hpp>
#include <gpuprof/report.hpp>
#include <gpuprof/report/chrome_trace.hpp>
#include <gpuprof/report/html.hpp>
#include <gpuprof/report/kernel_summary_writers.hpp>
#include <gpuprof/report/memory_timeline_svg.hpp>
#include <gpuprof/report/read_json.hpp>
#include <gpuprof/report/roofline_svg.hpp>

#include <sstream>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string trace_path = gpuprof_fuzz::scratch_file("trace.json");
  return gpuprof_fuzz::run([&] {
    const gpuprof::Report report =
        gpuprof::detail::report_from_json(gpuprof::detail::parse_json(gpuprof_fuzz::text_of(data, size)));
    std::ostringstream text;
    gpuprof::print_table(report, text);
    (void)gpuprof::to_markdown(report);
    (void)gpuprof::to_json(report);
    (void)gpuprof::to_html(report);
    gpuprof::write_chrome_trace(report, trace_path);
    (void)gpuprof::to_json(gpuprof::kern_sum(report));
    (void)gpuprof::to_json(gpuprof::scope_kern_sum(report));
    (void)gpuprof::to_json(gpuprof::scope_gpu_summary(report));
    (void)gpuprof::to_memory_timeline_svg(report.memory_timeline);
    (void)gpuprof::to_roofline_svg(report);
    const gpuprof::Comparison comparison = gpuprof::compare(report, report);
    (void)gpuprof::to_table(comparison);
    (void)gpuprof::to_markdown(comparison);
  });
}
