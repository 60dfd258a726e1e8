// gpuprof/report/write.hpp: write(report, path[, options]), the report in
// the format its file name asks for, written whole or not at all.
//
// ```cpp
// #include <gpuprof/report/write.hpp>
// void save(const gpuprof::Report& report) {
//   gpuprof::ReportFileOptions options;
//   options.html.title = "training step";
//   for (const char* path : {"run.json", "run.trace.json", "run.csv", "run.md", "run.html"})
//     gpuprof::write(report, path, options);
// }
// ```
//
// By the end of the name (the longest that matches): .json the report's JSON,
// .trace.json a Chrome trace, .csv, .md the markdown table, .txt the terminal
// table, .html the page, .roofline.svg the roofline, .memory.svg the memory
// timeline. Any other name is a gpuprof::Error naming these.
#pragma once
#include <string>

#include "../detail/file_format.hpp"
#include "../report_model.hpp"
#include "chrome_trace.hpp"
#include "csv.hpp"
#include "html.hpp"
#include "json.hpp"
#include "memory_timeline_svg.hpp"
#include "roofline_svg.hpp"
#include "scope_table.hpp"

GPUPROF_NAMESPACE_BEGIN

// The settings of each format write() may pick.
struct ReportFileOptions {
  HtmlOptions html;
  ChromeTraceOptions chrome_trace;
  RooflineSvgOptions roofline_svg;
  MemoryTimelineSvgOptions memory_timeline_svg;
};

inline void write(const Report& report, const std::string& path, const ReportFileOptions& options = {}) {
  detail::write_by_extension(
      path, "a report",
      {{".json", [&] { return to_json(report); }},
       {".trace.json", [&] { return to_chrome_trace(report, options.chrome_trace); }},
       {".csv", [&] { return to_csv(report); }},
       {".md", [&] { return to_markdown(report); }},
       {".txt", [&] { return to_table(report); }},
       {".html", [&] { return to_html(report, options.html); }},
       {".roofline.svg", [&] { return to_roofline_svg(report, options.roofline_svg); }},
       {".memory.svg",
        [&] { return to_memory_timeline_svg(report.memory_timeline, options.memory_timeline_svg); }}});
}

GPUPROF_NAMESPACE_END
