// gpuprof/gpuprof.hpp: everything gpuprof offers, in one include.
#pragma once
#include "config.hpp"

#include "atomic_file.hpp"
#include "bench.hpp"
#include "compare.hpp"
#include "clock.hpp"
#include "cuda_events.hpp"
#include "environment.hpp"
#include "device.hpp"
#include "error.hpp"
#include "graph.hpp"
#include "json_writer.hpp"
#include "kernel_names.hpp"
#include "kernel_summary.hpp"
#include "report/kernel_summary_writers.hpp"
#include "memory.hpp"  // MemoryWatch itself only when built with CUDA
#include "memory_timeline.hpp"
#include "nvtx.hpp"
#include "profiler.hpp"
#include "report.hpp"
#include "report/bench_json.hpp"
#include "report/gbench_json.hpp"
#include "report/memory_timeline.hpp"
#include "report/read_json.hpp"
#include "scope.hpp"
#include "stats.hpp"
#include "table.hpp"
#include "work.hpp"
#if GPUPROF_WITH_CUPTI
#include "cupti.hpp"
#endif
