// profile/counter_capture.cpp: see counter_capture.hpp.
#include "profile/counter_capture.hpp"

#include <gpuprof/counters.hpp>

namespace transformer::profile {

gpuprof::CounterSet collect_counters(const std::function<void()>& work) {
  gpuprof::CounterCaptureOptions options;
  // A large-model step opens hundreds of scopes up to three levels deep, each
  // its own range: room for all of them (with the default 512 the large
  // step's capture crashed on the H200; not explained yet).
  options.max_ranges = 4096;
  gpuprof::CounterCapture capture(options);
  gpuprof::CounterSet set = capture.measure(work);
  set.scopes = gpuprof::merge_by_name(set.scopes);
  return set;
}

}  // namespace transformer::profile
