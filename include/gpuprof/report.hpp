// gpuprof/report.hpp: the report model and all of its writers (terminal and
// markdown table, CSV, JSON, Chrome trace, HTML) in one include. Each writer
// is a free function of the report; the write_ ones write a file whole or
// not at all.
//
// ```cpp
// #include <gpuprof/report.hpp>
// #include <iostream>
// void write_all(const gpuprof::Report& report) {
//   gpuprof::print_table(report, std::cout);  // or markdown_table(report)
//   gpuprof::write_json(report, "report.json");
//   gpuprof::write_csv(report, "report.csv");
//   gpuprof::write_chrome_trace(report, "trace.json");
//   gpuprof::write_html(report, "report.html");
// }
// ```
#pragma once
#include "report_model.hpp"

#include "report/chrome_trace.hpp"
#include "report/csv.hpp"
#include "report/html.hpp"
#include "report/json.hpp"
#include "report/scope_table.hpp"
