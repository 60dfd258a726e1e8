// gpuprof/report.hpp: the report model and all of its writers in one
// include. Every format has to_X(report[, options]) for the text and
// write_X(report, path[, options]) for a file, written whole or not at all;
// write(report, path[, options]) picks the format from the file's name
// (report/write.hpp).
//
// ```cpp
// #include <gpuprof/report.hpp>
// #include <iostream>
// void write_all(const gpuprof::Report& report) {
//   gpuprof::print_table(report, std::cout);  // or to_table(report), to_markdown(report)
//   gpuprof::write_json(report, "report.json");
//   gpuprof::write_csv(report, "report.csv");
//   gpuprof::write_chrome_trace(report, "trace.json");
//   gpuprof::write(report, "report.html");  // the format from the name
// }
// ```
#pragma once
#include "report_model.hpp"

#include "report/chrome_trace.hpp"
#include "report/csv.hpp"
#include "report/html.hpp"
#include "report/json.hpp"
#include "report/memory_timeline_svg.hpp"
#include "report/roofline_svg.hpp"
#include "report/scope_table.hpp"
#include "report/write.hpp"
