// profile/counter_capture.hpp: hardware counters per scope over one piece of
// work, through gpuprof::CounterCapture. The example's one use of it, kept
// apart so that the rest of --counters depends only on the report model.
#pragma once
#include <functional>

#include <gpuprof/report_model.hpp>

namespace transformer::profile {

// Runs `work` once per replay pass while a CounterCapture with the default
// metric set (which includes every metric the roofline reads) measures its
// scopes, then once more, untouched by the passes, and returns the report of
// that last run: its timings, and the capture's counters (one range per
// scope path: the values of ONE run of the work) and `ceilings`, which the
// capture adds itself. Without profiling permission or on an unsupported GPU
// the passes do not run and the report's counters are empty, their note
// saying why.
gpuprof::Report counters_report(const std::function<void()>& work, const gpuprof::RooflineCeilings& ceilings);

}  // namespace transformer::profile
