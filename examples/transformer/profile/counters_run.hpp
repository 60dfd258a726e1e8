// profile/counters_run.hpp: the GPU side of transformer_profile --counters.
// Needs the CUDA backend; the counters need CUPTI's range profiler.
#pragma once
#include <gpuprof/roofline.hpp>

#include "profile/counters_results.hpp"
#include "profile/profile_options.hpp"

namespace transformer::profile {

// The card's roofs: cuBLAS GEMM throughput per precision (bench/gemm_ceiling)
// as the fp32, tensor tf32 and tensor bf16 ceilings, and a device-to-device
// copy's bandwidth (bytes read plus written) as the DRAM slope.
gpuprof::RooflineCeilings measure_roofline_ceilings();

// Every configuration of `options`, forward-only and as a train step, with
// counters per scope; writes each run's report (JSON) and roofline picture
// (SVG) under options.out_dir as it goes. The caller writes the markdown.
CountersResults run_counters(const ProfileOptions& options);

}  // namespace transformer::profile
