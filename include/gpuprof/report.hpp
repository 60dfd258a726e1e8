// gpuprof/report.hpp: the report model and all of its writers (terminal and
// markdown table, CSV, JSON, Chrome trace, HTML). Include this, not the pieces, to
// call Report's writer member functions.
#pragma once
#include "report_model.hpp"

#include "report/chrome_trace.hpp"
#include "report/csv.hpp"
#include "report/html.hpp"
#include "report/json.hpp"
#include "report/scope_table.hpp"
