// bench/results.hpp: everything one run of transformer_bench measured, as
// plain data: what the outputs (table, JSON, CSV) are written from.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "result_row.hpp"

namespace transformer::bench {

// The timed steps after `warmup` warm-up steps, on a fresh backend.
struct WarmupStudyRow {
  std::string size;
  int ctx = 0;
  Mode mode = Mode::fwd;
  Precision precision = Precision::fp32;
  int warmup = 0, steps = 0;
  double mean_ms = 0, std_ms = 0;
  double first_ms = 0;      // the first timed step: the cold one when warmup == 0
  double rest_mean_ms = 0;  // the timed steps after the first
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
  std::string device;   // the GPU's name, or a description of the CPU backend
  std::string backend;  // "cuda" or "cpu"
  int batch = 0, warmup = 0, steps = 0;
  bool graph = false;  // --graph: timed steps were replays of one CUDA graph
  unsigned long long seed = 0;
  std::map<std::string, double> ceilings_tflops;  // by precision name; empty on the CPU
  std::vector<ResultRow> rows;
  std::vector<WarmupStudyRow> warmup_study;
  std::vector<LossCurve> loss_curves;
};

}  // namespace transformer::bench
