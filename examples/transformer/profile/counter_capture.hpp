// profile/counter_capture.hpp: hardware counters per scope over one piece of
// work, through gpuprof::CounterCapture. The example's one use of it, kept
// apart so that the rest of --counters depends only on the plain data
// (gpuprof/counter_data.hpp).
#pragma once
#include <functional>

#include <gpuprof/counter_data.hpp>

namespace transformer::profile {

// Runs `work` while a CounterCapture with the default metric set (which
// includes the FLOP, DRAM, L2 and occupancy metrics the roofline reads)
// collects per scope; its result. Without profiling permission or on an
// unsupported GPU the set is empty and its note says why.
gpuprof::CounterSet collect_counters(const std::function<void()>& work);

}  // namespace transformer::profile
