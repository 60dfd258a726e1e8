// bench/result_row.hpp: one configuration's outcome, the unit every output
// (table, JSON, CSV) and every join (PyTorch figures) works on.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "backend.hpp"

namespace transformer::bench {

// error: the configuration failed for another reason (note says why); the
// sweep goes on and the driver exits with status 1 at the end.
enum class RowStatus { ok, oom, unsupported, error };
const char* to_string(RowStatus status);

// A bench/torch_ref.py row joined on (size, ctx, mode, precision).
struct TorchFigures {
  bool oom = false;
  bool compiled = false;  // torch.compile run
  std::optional<double> median_ms, mean_ms;
  std::optional<double> peak_mem_bytes;  // torch.cuda.max_memory_allocated
};

struct ResultRow {
  std::string size;
  int ctx = 0, batch = 0;
  Mode mode = Mode::fwd;
  Precision precision = Precision::fp32;
  std::string backend;  // "cuda" or "cpu"
  int warmup = 0, steps = 0;
  bool graph = false;  // the timed steps were replays of one captured CUDA graph
  RowStatus status = RowStatus::ok;
  std::string note;  // why a row is unsupported or failed

  std::size_t params = 0;
  std::string timing;  // "cuda_events" or "host_clock": which clock the times are from
  std::optional<double> mean_ms, std_ms, median_ms, min_ms, cold_ms;
  std::optional<double> tokens_per_s, tflops;
  std::optional<double> mfu;                   // null on the CPU (no measured ceiling)
  std::optional<std::int64_t> peak_mem_bytes;  // cudaMemGetInfo high-water mark; null on the CPU
  std::optional<std::size_t> allocated_bytes;  // Backend::allocated_bytes()
  std::optional<std::size_t> bytes_requested, bytes_free;  // oom rows

  std::optional<TorchFigures> torch;
  // torch median / our median, when both ran.
  std::optional<double> speedup_vs_torch() const;
  // our peak memory / torch's peak memory, when both are known.
  std::optional<double> memory_ratio_vs_torch() const;
};

}  // namespace transformer::bench
