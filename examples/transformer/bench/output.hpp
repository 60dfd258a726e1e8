// bench/output.hpp: the three renderings of BenchResults: the terminal table,
// the JSON document (schema "gpuprof.transformer_bench", version 1) and CSV.
#pragma once
#include <iosfwd>
#include <string>

#include "results.hpp"

namespace transformer::bench {

inline constexpr const char* json_schema_name = "gpuprof.transformer_bench";
inline constexpr int json_schema_version = 1;

// One aligned line per configuration; PyTorch columns when any row has torch figures.
void print_results_table(std::ostream& out, const BenchResults& results);
// "OOM (needs X GiB, Y GiB free)" for an oom row.
std::string oom_text(const ResultRow& row);

std::string results_json(const BenchResults& results);
// Header line of the row_fields() names, then one line per row.
std::string results_csv(const BenchResults& results);

}  // namespace transformer::bench
