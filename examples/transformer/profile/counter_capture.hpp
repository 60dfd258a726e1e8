// profile/counter_capture.hpp: hardware counters per scope over one piece of
// work, through gpuprof::CounterCapture. The example's one use of it, kept
// apart so that the rest of --counters depends only on the plain data
// (gpuprof/counter_data.hpp).
#pragma once
#include <functional>

#include <gpuprof/counter_data.hpp>

namespace transformer::profile {

// Runs `work` once per replay pass while a CounterCapture with the default
// metric set (which includes every metric the roofline reads) measures its
// scopes; one CounterRange per scope path, the instances of a path in one
// run merged (merge_by_name): the values are those of ONE run of the work.
// Without profiling permission or on an unsupported GPU the work does not
// run, the set is empty and its note says why.
gpuprof::CounterSet collect_counters(const std::function<void()>& work);

}  // namespace transformer::profile
