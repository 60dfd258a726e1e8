// harness/output.hpp: the renderings of BenchResults (the terminal table, the
// JSON document of schema "gpuprof.transformer_bench" version 1, and CSV, both
// walking one column list), and the check, before any measurement, that every
// output the user asked for can be written.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gpuprof/json_writer.hpp>
#include <gpuprof/output_paths.hpp>

#include "harness/results.hpp"

namespace transformer::harness {

inline constexpr const char* json_schema_name = "gpuprof.transformer_bench";
inline constexpr int json_schema_version = 1;

// One aligned line per configuration; PyTorch columns when any row has torch figures.
void print_results_table(std::ostream& out, const BenchResults& results);
// "OOM (needs X GiB, Y GiB free)" for an oom row.
std::string oom_text(const ResultRow& row);
// "NVIDIA H100 80GB HBM3 (cuDNN 9.14.0)": a report's device, with the cuDNN
// that ran where there was one.
std::string device_text(const std::string& device, const std::optional<std::string>& cudnn);
// "name": the value, or null where there is none (every result JSON's optional fields).
template <class T>
void write_optional(gpuprof::JsonWriter& json, const char* name, const std::optional<T>& value) {
  json.key(name);
  if (value) json.value(*value);
  else json.value(nullptr);
}

std::string results_json(const BenchResults& results);
// Header line of the row_fields() names, then one line per row.
std::string results_csv(const BenchResults& results);

// null (not measured / not applicable), flag, text, integer, real. Text is
// always a std::string: a bare literal would convert to bool.
using FieldValue = std::variant<std::nullptr_t, bool, std::string, std::int64_t, double>;
using RowFields = std::vector<std::pair<std::string, FieldValue>>;

RowFields row_fields(const ResultRow& row);

// gpuprof::check_output_files (gpuprof/output_paths.hpp) with its error as a
// UsageError: an output that cannot be created, that names an input or
// another output. Leaves nothing behind.
void check_output_files(const std::vector<gpuprof::OutputFile>& outputs, const std::vector<std::string>& inputs = {});

// Creates `directory` (and parents) if needed and checks it is writable.
void prepare_output_directory(const std::string& flag, const std::string& directory);

}  // namespace transformer::harness
