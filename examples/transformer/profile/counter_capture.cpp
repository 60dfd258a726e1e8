// profile/counter_capture.cpp: see counter_capture.hpp.
#include "profile/counter_capture.hpp"

#include <gpuprof/counters.hpp>
#include <gpuprof/profiler.hpp>

namespace transformer::profile {

gpuprof::Report counters_report(const std::function<void()>& work,
                                const gpuprof::RooflineCeilings& ceilings) {
  gpuprof::CounterCaptureOptions options;
  // A large-model train step opens about 590 scopes, each its own range: room
  // for all of them (beyond max_ranges a scope is not measured).
  options.max_ranges = 4096;
  options.ceilings = ceilings;
  gpuprof::CounterCapture capture(options);
  capture.measure(work);
  gpuprof::profiler().reset();  // the passes' timings go; the counters stay
  work();
  return gpuprof::profiler().report();
}

}  // namespace transformer::profile
