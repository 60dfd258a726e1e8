// harness/output.cpp: the results table, the JSON and CSV documents (one
// column list, row_fields, so both carry the same columns under the same names),
// and the up-front checks of output paths.
#include "harness/output.hpp"

#include <gpuprof/json_writer.hpp>
#include <gpuprof/output_paths.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <ostream>
#include <system_error>
#include <type_traits>

#include "harness/options.hpp"
#include "harness/cells.hpp"

namespace transformer::harness {

namespace {

template <typename Integer>
std::optional<double> as_double(const std::optional<Integer>& value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

std::string status_text(const ResultRow& row) {
  switch (row.status) {
    case RowStatus::ok:
      return "ok";
    case RowStatus::oom:
      return oom_text(row);
    case RowStatus::unsupported:
      return "unsupported (" + row.note + ")";
    case RowStatus::error:
      return "error: " + row.note;
  }
  return "?";
}

std::string torch_median_text(const ResultRow& row) {
  if (!row.torch) return "-";
  if (row.torch->oom) return "OOM";
  return fixed(row.torch->median_ms, 2);
}

std::string percent(const std::optional<double>& fraction) {
  if (!fraction) return "-";
  return fixed(*fraction * 100.0, 1) + "%";
}

}  // namespace

std::string oom_text(const ResultRow& row) {
  return "OOM (needs " + gib(as_double(row.bytes_requested)) + " GiB, " +
         gib(as_double(row.bytes_free)) + " GiB free)";
}

void print_results_table(std::ostream& out, const BenchResults& results) {
  const bool with_torch = std::any_of(results.rows.begin(), results.rows.end(),
                                      [](const ResultRow& row) { return row.torch.has_value(); });
  std::vector<std::string> header = {"size",     "ctx",       "mode",   "prec",    "attn",
                                     "mean ms",  "std ms",    "median ms", "min ms", "cold ms",
                                     "tokens/s", "TFLOP/s",   "MFU",    "peak GiB", "alloc GiB"};
  if (with_torch) header.insert(header.end(), {"torch ms", "speedup", "mem ratio"});
  header.emplace_back("status");

  std::vector<std::vector<std::string>> rows;
  for (const ResultRow& row : results.rows) {
    std::vector<std::string> cells = {row.size,
                                      std::to_string(row.ctx),
                                      to_string(row.mode),
                                      to_string(row.precision),
                                      to_string(row.attention),
                                      fixed(row.mean_ms, 2),
                                      fixed(row.std_ms, 2),
                                      fixed(row.median_ms, 2),
                                      fixed(row.min_ms, 2),
                                      fixed(row.cold_ms, 1),
                                      fixed(row.tokens_per_s, 0),
                                      fixed(row.tflops, 2),
                                      percent(row.mfu),
                                      gib(as_double(row.peak_mem_bytes)),
                                      gib(as_double(row.allocated_bytes))};
    if (with_torch) {
      cells.push_back(torch_median_text(row));
      const auto speedup = row.speedup_vs_torch();
      cells.push_back(speedup ? fixed(speedup, 2) + "x" : "-");
      const auto memory_ratio = row.memory_ratio_vs_torch();
      cells.push_back(memory_ratio ? fixed(memory_ratio, 2) + "x" : "-");
    }
    cells.push_back(status_text(row));
    rows.push_back(std::move(cells));
  }
  out << results.backend << " backend on " << device_text(results.device, results.cudnn) << "; batch "
      << results.batch << ", " << results.warmup << " warm-up + " << results.steps
      << " timed steps per configuration"
      << (results.graph ? ", each timed step one replay of the step captured as a CUDA graph" : "")
      << "\n";
  numbers_right_table(header, std::move(rows)).print(out, ruled_layout);
}

namespace {

template <typename T>
FieldValue optional_field(const std::optional<T>& value) {
  if (!value) return nullptr;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(*value);
  } else {
    return static_cast<std::int64_t>(*value);
  }
}

}  // namespace

RowFields row_fields(const ResultRow& row) {
  const auto integer = [](auto value) { return FieldValue(static_cast<std::int64_t>(value)); };
  RowFields fields = {
      {"size", row.size},
      {"ctx", integer(row.ctx)},
      {"batch", integer(row.batch)},
      {"mode", std::string(to_string(row.mode))},
      {"precision", std::string(to_string(row.precision))},
      {"attention", std::string(to_string(row.attention))},
      {"backend", row.backend},
      {"warmup", integer(row.warmup)},
      {"steps", integer(row.steps)},
      {"status", std::string(to_string(row.status))},
      {"note", row.note},
      {"params", integer(row.params)},
      {"timing", row.timing.empty() ? FieldValue(nullptr) : FieldValue(row.timing)},
      {"graph", row.graph},
      {"mean_ms", optional_field(row.mean_ms)},
      {"std_ms", optional_field(row.std_ms)},
      {"median_ms", optional_field(row.median_ms)},
      {"min_ms", optional_field(row.min_ms)},
      {"cold_ms", optional_field(row.cold_ms)},
      {"tokens_per_s", optional_field(row.tokens_per_s)},
      {"tflops", optional_field(row.tflops)},
      {"mfu", optional_field(row.mfu)},
      {"peak_mem_bytes", optional_field(row.peak_mem_bytes)},
      {"allocated_bytes", optional_field(row.allocated_bytes)},
      {"bytes_requested", optional_field(row.bytes_requested)},
      {"bytes_free", optional_field(row.bytes_free)},
  };
  const std::optional<TorchFigures>& torch = row.torch;
  fields.emplace_back("torch_median_ms", torch ? optional_field(torch->median_ms) : nullptr);
  fields.emplace_back("torch_oom", torch ? FieldValue(torch->oom) : FieldValue(nullptr));
  fields.emplace_back("torch_compiled", torch ? FieldValue(torch->compiled) : FieldValue(nullptr));
  fields.emplace_back("torch_peak_mem_bytes",
                      torch ? optional_field(torch->peak_mem_bytes) : nullptr);
  fields.emplace_back("speedup_vs_torch", optional_field(row.speedup_vs_torch()));
  fields.emplace_back("memory_ratio_vs_torch", optional_field(row.memory_ratio_vs_torch()));
  return fields;
}

namespace {

void write_field(gpuprof::JsonWriter& json, const FieldValue& value) {
  std::visit([&json](const auto& scalar) { json.value(scalar); }, value);
}

void write_rows(gpuprof::JsonWriter& json, const std::vector<ResultRow>& rows) {
  json.key("rows").begin_array();
  for (const ResultRow& row : rows) {
    // One row per line: the file stays readable and greppable like torch_reference.py's JSON lines.
    json.begin_object(gpuprof::JsonWriter::one_line);
    for (const auto& [name, value] : row_fields(row)) {
      json.key(name);
      write_field(json, value);
    }
    json.end_object();
  }
  json.end_array();
}

void write_warmup_study(gpuprof::JsonWriter& json, const std::vector<WarmupStudyRow>& study) {
  json.key("warmup_study").begin_array();
  for (const WarmupStudyRow& row : study) {
    json.begin_object(gpuprof::JsonWriter::one_line)
        .member("size", row.size)
        .member("ctx", row.ctx)
        .member("mode", to_string(row.mode))
        .member("precision", to_string(row.precision))
        .member("warmup", row.warmup)
        .member("steps", row.steps)
        .member("mean_ms", row.mean_ms)
        .member("std_ms", row.std_ms)
        .member("first_ms", row.first_ms)
        .member("rest_mean_ms", row.rest_mean_ms)
        .end_object();
  }
  json.end_array();
}

void write_loss_curves(gpuprof::JsonWriter& json, const std::vector<LossCurve>& curves) {
  json.key("loss_curves").begin_array();
  for (const LossCurve& curve : curves) {
    json.begin_object()
        .member("size", curve.size)
        .member("ctx", curve.ctx)
        .member("batch", curve.batch)
        .member("precision", to_string(curve.precision))
        .key("max_abs_divergence_from_fp32");
    if (curve.max_abs_divergence_from_fp32) {
      json.value(*curve.max_abs_divergence_from_fp32);
    } else {
      json.value(nullptr);
    }
    json.key("losses").begin_array(gpuprof::JsonWriter::one_line);
    for (const double loss : curve.losses) json.value(loss);
    json.end_array().end_object();
  }
  json.end_array();
}

}  // namespace

std::string device_text(const std::string& device, const std::optional<std::string>& cudnn) {
  return cudnn ? device + " (cuDNN " + *cudnn + ")" : device;
}

std::string results_json(const BenchResults& results) {
  gpuprof::JsonWriter json;
  json.begin_object()
      .member("schema", json_schema_name)
      .member("version", json_schema_version)
      .member("device", results.device)
      .member("backend", results.backend);
  write_optional(json, "cudnn", results.cudnn);
  json.member("batch", results.batch)
      .member("warmup", results.warmup)
      .member("steps", results.steps)
      .member("seed", results.seed);
  json.key("ceilings_tflops").begin_object(gpuprof::JsonWriter::one_line);
  for (const auto& [precision, tflops] : results.ceilings_tflops) json.member(precision, tflops);
  json.end_object();
  write_rows(json, results.rows);
  write_warmup_study(json, results.warmup_study);
  write_loss_curves(json, results.loss_curves);
  json.end_object();
  return json.str() + "\n";
}

namespace {

std::string csv_cell(const FieldValue& value) {
  struct Visitor {
    std::string operator()(std::nullptr_t) const { return ""; }
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(std::int64_t number) const { return std::to_string(number); }
    std::string operator()(double number) const {
      if (!std::isfinite(number)) return "";
      char text[32];
      const auto result = std::to_chars(text, text + sizeof text, number);
      return std::string(text, result.ptr);
    }
    std::string operator()(const std::string& text) const {
      if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
      std::string quoted = "\"";
      for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      return quoted + "\"";
    }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace

std::string results_csv(const BenchResults& results) {
  std::string csv;
  const auto append_line = [&csv](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) csv += (i ? "," : "") + cells[i];
    csv += "\n";
  };
  std::vector<std::string> header;
  for (const auto& field : row_fields(ResultRow{})) header.push_back(field.first);
  append_line(header);
  for (const ResultRow& row : results.rows) {
    std::vector<std::string> cells;
    for (const auto& field : row_fields(row)) cells.push_back(csv_cell(field.second));
    append_line(cells);
  }
  return csv;
}

void check_output_files(const std::vector<gpuprof::OutputFile>& outputs, const std::vector<std::string>& inputs) {
  try {
    gpuprof::check_output_files(outputs, inputs);
  } catch (const gpuprof::Error& error) {
    throw UsageError(error.what());
  }
}

void prepare_output_directory(const std::string& flag, const std::string& directory) {
  const gpuprof::OutputFile output{flag, directory};
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) throw UsageError(flag + " '" + directory + "': cannot create: " + error.message());
  if (!std::filesystem::is_directory(directory, error))
    throw UsageError(flag + " '" + directory + "': not a directory");
  try {
    gpuprof::detail::probe_directory(output, directory);
  } catch (const gpuprof::Error& failure) {
    throw UsageError(failure.what());
  }
}

}  // namespace transformer::harness
