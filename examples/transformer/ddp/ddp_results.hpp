// ddp/ddp_results.hpp: what a data-parallel run measured, every rank side by
// side, and its table and JSON ("schema": "gpuprof.transformer_ddp").
// Plain data and text: the tests check it without a device.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "model/backend.hpp"

namespace transformer::ddp {

// One rank's figures; the step times are CUDA-event times of the whole step
// (forward, backward with the reductions, AdamW). The communication figures
// are per-step medians from captured kernels (comm_overlap.hpp), NaN when the
// run was not profiled.
struct RankFigures {
  double step_median_ms = 0, step_mean_ms = 0, step_min_ms = 0;
  double loss = 0;  // of the last timed step
  double communication_ms = 0, computation_ms = 0, overlap_ms = 0;

  // Flattened for the all-gather over NCCL, and back.
  static constexpr std::size_t kFields = 7;
  std::vector<double> to_vector() const;
  static RankFigures from_vector(const double* values);
};

struct DdpResults {
  RunConfig config;  // one rank's (per-GPU batch)
  int world = 1;
  int warmup = 0, steps = 0;
  double bucket_mb = 0;
  std::size_t buckets = 0;  // all-reduces per step
  bool profiled = false;
  std::string device;                // rank 0's GPU
  std::optional<std::string> cudnn;  // the cuDNN library loaded ("9.14.0")
  std::vector<RankFigures> ranks;

  // The step is synchronous: the slowest rank's median sets the pace.
  double step_ms() const;
  double tokens_per_s() const;  // world × batch × ctx per step_ms
};

std::string ddp_table(const DdpResults& results);
std::string ddp_json(const DdpResults& results);

}  // namespace transformer::ddp
