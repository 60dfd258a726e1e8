// bench/gemm_ceiling.hpp: the measured GEMM throughput per precision that MFU
// is reported against: an n×n×n cuBLAS product on random data, median of the
// timed repetitions after a warm-up (the same procedure as bench/peaks.py).
#pragma once
#include <map>

#include "model/backend.hpp"

namespace transformer::bench {

struct GemmCeilingOptions {
  int n = 8192;
  int warmup = 3;
  int iters = 10;
};

// TFLOP/s (2·n³ / median time) for fp32 (plain fp32, TF32 off), tf32 and bf16
// (bf16 in and out, fp32 accumulation). Needs a usable GPU; in a build
// without CUDA it throws std::runtime_error.
std::map<Precision, double> measure_gemm_ceilings(const GemmCeilingOptions& options = {});

}  // namespace transformer::bench
