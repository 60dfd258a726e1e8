// profile/counter_capture.cpp: see counter_capture.hpp.
#include "profile/counter_capture.hpp"

#include <gpuprof/counters.hpp>

namespace transformer::profile {

gpuprof::CounterSet collect_counters(const std::function<void()>& work) {
  gpuprof::CounterCaptureOptions options;
  // A large-model train step opens about 590 scopes up to three levels deep,
  // each its own range: room for all of them (beyond max_ranges a scope is
  // not measured).
  options.max_ranges = 4096;
  gpuprof::CounterCapture capture(options);
  gpuprof::CounterSet set = capture.measure(work);
  set.scopes = gpuprof::merge_by_name(set.scopes);
  return set;
}

}  // namespace transformer::profile
