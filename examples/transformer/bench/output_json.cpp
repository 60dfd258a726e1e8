// bench/output_json.cpp: the JSON document written by --json.
#include <gpuprof/json_writer.hpp>

#include "output.hpp"
#include "row_fields.hpp"

namespace transformer::bench {
namespace {

void write_field(gpuprof::JsonWriter& json, const FieldValue& value) {
  std::visit([&json](const auto& scalar) { json.value(scalar); }, value);
}

void write_rows(gpuprof::JsonWriter& json, const std::vector<ResultRow>& rows) {
  json.key("rows").begin_array();
  for (const ResultRow& row : rows) {
    // One row per line: the file stays readable and greppable like torch_ref's JSON lines.
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

std::string results_json(const BenchResults& results) {
  gpuprof::JsonWriter json;
  json.begin_object()
      .member("schema", json_schema_name)
      .member("version", json_schema_version)
      .member("device", results.device)
      .member("backend", results.backend)
      .member("batch", results.batch)
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

}  // namespace transformer::bench
