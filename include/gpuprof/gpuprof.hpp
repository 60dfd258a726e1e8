// gpuprof/gpuprof.hpp: everything gpuprof offers, in one include.
#pragma once
#include "config.hpp"

#include "bench.hpp"
#include "clock.hpp"
#include "cuda_events.hpp"
#include "error.hpp"
#include "nvtx.hpp"
#include "profiler.hpp"
#include "report.hpp"
#include "scope.hpp"
#include "stats.hpp"
#include "work.hpp"
#if GPUPROF_WITH_CUPTI
#include "cupti.hpp"
#endif
