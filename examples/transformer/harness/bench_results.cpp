// harness/bench_results.cpp: derived figures of a row.
#include "harness/bench_results.hpp"

namespace transformer::harness {

const char* to_string(RowStatus status) {
  switch (status) {
    case RowStatus::ok: return "ok";
    case RowStatus::oom: return "oom";
    case RowStatus::unsupported: return "unsupported";
    case RowStatus::error: return "error";
  }
  return "?";
}

gpuprof::AxisPoint sweep_point(const std::string& size, int ctx, Mode mode, Precision precision,
                               Attention attention) {
  return {{"size", size},
          {"ctx", ctx},
          {"mode", to_string(mode)},
          {"precision", to_string(precision)},
          {"attention", to_string(attention)}};
}

gpuprof::AxisPoint sweep_point(const ResultRow& row) {
  return sweep_point(row.size, row.ctx, row.mode, row.precision, row.attention);
}

std::optional<double> ResultRow::speedup_vs_torch() const {
  if (!torch || torch->oom || !torch->median_ms || !median_ms || *median_ms <= 0) return std::nullopt;
  return *torch->median_ms / *median_ms;
}

std::optional<double> ResultRow::memory_ratio_vs_torch() const {
  if (!torch || !torch->peak_mem_bytes || *torch->peak_mem_bytes <= 0 || !peak_mem_bytes) return std::nullopt;
  return static_cast<double>(*peak_mem_bytes) / *torch->peak_mem_bytes;
}

}  // namespace transformer::harness
