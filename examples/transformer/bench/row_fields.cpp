// bench/row_fields.cpp: the column list of a result row.
#include "row_fields.hpp"

#include <optional>
#include <type_traits>

namespace transformer::bench {
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

}  // namespace transformer::bench
