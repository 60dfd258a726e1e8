// harness/output.cpp: the results table, the gpuprof.bench JSON and the CSV
// (one column list, row_fields, so both carry the same columns under the same
// names), and the up-front checks of output paths.
#include "harness/output.hpp"

#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof/report/bench_json.hpp>
#include <gpuprof/stats.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <ostream>
#include <system_error>
#include <type_traits>

#include "harness/run_flags.hpp"
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
    case RowStatus::ok: return "ok";
    case RowStatus::oom: return oom_text(row);
    case RowStatus::unsupported: return "unsupported (" + row.note + ")";
    case RowStatus::error: return "error: " + row.note;
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
  return "OOM (needs " + gib(as_double(row.bytes_requested)) + " GiB, " + gib(as_double(row.bytes_free)) +
         " GiB free)";
}

void print_results_table(std::ostream& out, const BenchResults& results) {
  const bool with_torch = std::any_of(results.rows.begin(), results.rows.end(),
                                      [](const ResultRow& row) { return row.torch.has_value(); });
  std::vector<std::string> header = {"size",     "ctx",     "mode",      "prec",     "attn",
                                     "mean ms",  "std ms",  "median ms", "min ms",   "cold ms",
                                     "tokens/s", "TFLOP/s", "MFU",       "peak GiB", "alloc GiB"};
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
      << (results.graph ? ", each timed step one replay of the step captured as a CUDA graph" : "") << "\n";
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
  fields.emplace_back("torch_peak_mem_bytes", torch ? optional_field(torch->peak_mem_bytes) : nullptr);
  fields.emplace_back("speedup_vs_torch", optional_field(row.speedup_vs_torch()));
  fields.emplace_back("memory_ratio_vs_torch", optional_field(row.memory_ratio_vs_torch()));
  return fields;
}

std::string device_text(const std::string& device, const std::optional<std::string>& cudnn) {
  return cudnn ? device + " (cuDNN " + *cudnn + ")" : device;
}

namespace {

gpuprof::BenchField bench_field(const FieldValue& value) {
  return std::visit([](const auto& scalar) { return gpuprof::BenchField(scalar); }, value);
}

// Timed steps as a BenchResult: the samples on the clock that took them.
gpuprof::BenchResult timed_steps(const std::vector<double>& samples_ms, bool gpu_timed, int warmup) {
  gpuprof::BenchResult result;
  result.timing_source = gpu_timed ? gpuprof::TimingSource::cuda_events : gpuprof::TimingSource::host_clock;
  (gpu_timed ? result.gpu_ms : result.host_ms) = samples_ms;
  result.gpu = gpuprof::summarize(result.gpu_ms);
  result.host = gpuprof::summarize(result.host_ms);
  result.warmup_calls = warmup;
  result.stop_reason = std::to_string(samples_ms.size()) + " timed steps";
  return result;
}

std::string configuration_name(Mode mode, const std::string& size, int ctx, Precision precision) {
  return std::string(to_string(mode)) + "/" + size + "/ctx" + std::to_string(ctx) + "/" +
         to_string(precision);
}

gpuprof::NamedBenchResult sweep_run(const BenchResults& results, const ResultRow& row) {
  gpuprof::NamedBenchResult run;
  run.axes = sweep_point(row);
  run.name = run.axes.row_name("lm");
  if (row.status == RowStatus::ok) {
    run.result = timed_steps(row.samples_ms, row.timing == "cuda_events", row.warmup);
    run.result.cold_ms = row.cold_ms.value_or(0);
    if (row.graph) run.result.stop_reason += ", each one replay of a CUDA graph";
  } else {
    run.result.stop_reason = status_text(row);
  }
  const auto ceiling = results.ceilings_tflops.find(to_string(row.precision));
  run.fields = {
      {"study", std::string("sweep")},
      {"device", results.device},
      {"cudnn", results.cudnn ? gpuprof::BenchField(*results.cudnn) : gpuprof::BenchField(nullptr)},
      {"seed", static_cast<std::int64_t>(results.seed)},
      {"ceiling_tflops", ceiling != results.ceilings_tflops.end() ? gpuprof::BenchField(ceiling->second)
                                                                  : gpuprof::BenchField(nullptr)}};
  for (const auto& [name, value] : row_fields(row)) run.fields.emplace_back(name, bench_field(value));
  return run;
}

gpuprof::NamedBenchResult warmup_study_run(const WarmupStudyRow& row) {
  gpuprof::NamedBenchResult run;
  run.name = "warmup_study/" + configuration_name(row.mode, row.size, row.ctx, row.precision) + "/" +
             to_string(row.attention) + "/warmup" + std::to_string(row.warmup);
  run.result = timed_steps(row.samples_ms, row.gpu_timed, row.warmup);
  run.fields = {{"study", std::string("warmup_study")},
                {"size", row.size},
                {"ctx", std::int64_t{row.ctx}},
                {"mode", std::string(to_string(row.mode))},
                {"precision", std::string(to_string(row.precision))},
                {"attention", std::string(to_string(row.attention))},
                {"warmup", std::int64_t{row.warmup}},
                {"steps", std::int64_t{row.steps}},
                {"mean_ms", row.mean_ms},
                {"std_ms", row.std_ms},
                {"first_ms", row.first_ms},
                {"rest_mean_ms", row.rest_mean_ms}};
  return run;
}

gpuprof::NamedBenchResult loss_curve_run(const LossCurve& curve) {
  gpuprof::NamedBenchResult run;
  run.name =
      "loss_curve/" + curve.size + "/ctx" + std::to_string(curve.ctx) + "/" + to_string(curve.precision);
  run.result.stop_reason = "not timed: a loss curve";
  const std::optional<double>& divergence = curve.max_abs_divergence_from_fp32;
  run.fields = {{"study", std::string("loss_curve")},
                {"size", curve.size},
                {"ctx", std::int64_t{curve.ctx}},
                {"batch", std::int64_t{curve.batch}},
                {"precision", std::string(to_string(curve.precision))},
                {"max_abs_divergence_from_fp32",
                 divergence ? gpuprof::BenchField(*divergence) : gpuprof::BenchField(nullptr)},
                {"losses", curve.losses}};
  return run;
}

}  // namespace

std::string results_json(const BenchResults& results) {
  std::vector<gpuprof::NamedBenchResult> runs;
  for (const ResultRow& row : results.rows) runs.push_back(sweep_run(results, row));
  for (const WarmupStudyRow& row : results.warmup_study) runs.push_back(warmup_study_run(row));
  for (const LossCurve& curve : results.loss_curves) runs.push_back(loss_curve_run(curve));
  return gpuprof::to_bench_json(runs, {gpuprof::capture_environment()});
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

void check_output_files(const std::vector<gpuprof::OutputFile>& outputs,
                        const std::vector<std::string>& inputs) {
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
    gpuprof::probe_directory(output, directory);
  } catch (const gpuprof::Error& failure) {
    throw UsageError(failure.what());
  }
}

}  // namespace transformer::harness
