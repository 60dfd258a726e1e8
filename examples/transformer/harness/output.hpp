// harness/output.hpp: the renderings of BenchResults (the terminal table, the
// library's gpuprof.bench JSON, and CSV, the JSON's fields and the CSV walking
// one column list), and the check, before any measurement, that every output
// the user asked for can be written.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gpuprof/json_writer.hpp>
#include <gpuprof_cli/output_paths.hpp>

#include "harness/bench_results.hpp"

namespace transformer::harness {

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

// A gpuprof.bench document (gpuprof/report/bench_json.hpp), which
// gpuprof-compare reads: one benchmark per row of the sweep, named by its
// sweep_point ("lm[size=small,ctx=512,mode=step,precision=bf16,
// attention=fused]", the values also under "axes"), its timed steps as the samples, every
// row_fields() column as a field, with "study": "sweep" and the run's device,
// cuDNN, seed and GEMM ceiling; a row that did not run has no samples and its
// status as the stop reason. The warm-up study's runs follow
// ("warmup_study/.../warmup0", "study": "warmup_study"), then the loss curves
// ("loss_curve/tiny/ctx128/bf16", "study": "loss_curve", not timed: the
// losses are a field).
std::string results_json(const BenchResults& results);
// Header line of the row_fields() names, then one line per row.
std::string results_csv(const BenchResults& results);

// null (not measured / not applicable), flag, text, integer, real. Text is
// always a std::string: a bare literal would convert to bool.
using FieldValue = std::variant<std::nullptr_t, bool, std::string, std::int64_t, double>;
using RowFields = std::vector<std::pair<std::string, FieldValue>>;

RowFields row_fields(const ResultRow& row);

// gpuprof::check_output_files (gpuprof_cli/output_paths.hpp) with its error as a
// UsageError: an output that cannot be created, that names an input or
// another output. Leaves nothing behind.
void check_output_files(const std::vector<gpuprof::OutputFile>& outputs,
                        const std::vector<std::string>& inputs = {});

// Creates `directory` (and parents) if needed and checks it is writable.
void prepare_output_directory(const std::string& flag, const std::string& directory);

}  // namespace transformer::harness
