// profile/counter_capture.cpp: see counter_capture.hpp.
#include "profile/counter_capture.hpp"

#include <gpuprof/counters.hpp>

namespace transformer::profile {

gpuprof::CounterSet collect_counters(const std::function<void()>& work) {
  gpuprof::CounterCapture capture;
  gpuprof::CounterSet set = capture.measure(work);
  set.scopes = gpuprof::merge_by_name(set.scopes);
  return set;
}

}  // namespace transformer::profile
