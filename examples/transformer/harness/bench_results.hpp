// harness/bench_results.hpp: what a run measured, as plain data: one configuration's
// row (the unit every output and every join with PyTorch figures works on)
// and the studies of transformer_bench, which the outputs are written from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gpuprof/axes.hpp>

#include "model/backend.hpp"

namespace transformer::harness {

// error: the configuration failed for another reason (note says why); the
// sweep goes on and the driver exits with status 1 at the end.
enum class RowStatus { ok, oom, unsupported, error };
const char* to_string(RowStatus status);

// A scripts/torch_reference.py row joined on (size, ctx, mode, precision).
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
  Attention attention = Attention::naive;
  std::string backend;  // "cuda" or "cpu"
  int warmup = 0, steps = 0;
  bool graph = false;  // the timed steps were replays of one captured CUDA graph
  RowStatus status = RowStatus::ok;
  std::string note;  // why a row is unsupported or failed

  std::size_t params = 0;
  std::string timing;              // "cuda_events" or "host_clock": which clock the times are from
  std::vector<double> samples_ms;  // the timed steps, in order; empty unless ok
  std::optional<double> mean_ms, std_ms, median_ms, min_ms, cold_ms;
  std::optional<double> tokens_per_s, tflops;
  std::optional<double> mfu;                               // null on the CPU (no measured ceiling)
  std::optional<std::int64_t> peak_mem_bytes;              // cudaMemGetInfo high-water mark; null on the CPU
  std::optional<std::size_t> allocated_bytes;              // Backend::allocated_bytes()
  std::optional<std::size_t> bytes_requested, bytes_free;  // oom rows

  std::optional<TorchFigures> torch;
  // torch median / our median, when both ran.
  std::optional<double> speedup_vs_torch() const;
  // our peak memory / torch's peak memory, when both are known.
  std::optional<double> memory_ratio_vs_torch() const;
};

// A configuration's point of the sweep's parameter axes (gpuprof/axes.hpp):
// size, ctx, mode, precision, attention. It names the row in the JSON
// ("lm[size=small,ctx=512,mode=step,precision=bf16,attention=fused]")
// and its "axes", which gpuprof-compare matches rows of two runs by.
gpuprof::AxisPoint sweep_point(const std::string& size, int ctx, Mode mode, Precision precision,
                               Attention attention);
gpuprof::AxisPoint sweep_point(const ResultRow& row);

// The timed steps after `warmup` warm-up steps, on a fresh backend.
struct WarmupStudyRow {
  std::string size;
  int ctx = 0;
  Mode mode = Mode::fwd;
  Precision precision = Precision::fp32;
  Attention attention = Attention::naive;
  int warmup = 0, steps = 0;
  double mean_ms = 0, std_ms = 0;
  double first_ms = 0;             // the first timed step: the cold one when warmup == 0
  double rest_mean_ms = 0;         // the timed steps after the first
  std::vector<double> samples_ms;  // the timed steps, in order
  bool gpu_timed = false;          // CUDA events (else the host clock)
};

// Loss of every train step from one initialisation and one fixed batch.
struct LossCurve {
  std::string size;
  int ctx = 0, batch = 0;
  Precision precision = Precision::fp32;
  std::vector<double> losses;
  // max over steps of |loss - fp32 loss|; empty for fp32 itself or without an fp32 curve.
  std::optional<double> max_abs_divergence_from_fp32;
};

struct BenchResults {
  std::string device;                // the GPU's name, or a description of the CPU backend
  std::string backend;               // "cuda" or "cpu"
  std::optional<std::string> cudnn;  // the cuDNN loaded at run time ("9.14.0")
  int batch = 0, warmup = 0, steps = 0;
  bool graph = false;  // timed steps were replays of one CUDA graph
  unsigned long long seed = 0;
  std::map<std::string, double> ceilings_tflops;  // by precision name; empty on the CPU
  std::vector<ResultRow> rows;
  std::vector<WarmupStudyRow> warmup_study;
  std::vector<LossCurve> loss_curves;
};

}  // namespace transformer::harness
