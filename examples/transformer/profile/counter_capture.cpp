// profile/counter_capture.cpp: see counter_capture.hpp.
#include "profile/counter_capture.hpp"

#if __has_include(<gpuprof/counters.hpp>)
#include <gpuprof/counters.hpp>
#define TRANSFORMER_HAS_COUNTER_CAPTURE 1
#else
#define TRANSFORMER_HAS_COUNTER_CAPTURE 0
#endif

namespace transformer::profile {

gpuprof::CounterSet collect_counters(const std::function<void()>& work) {
#if TRANSFORMER_HAS_COUNTER_CAPTURE
  gpuprof::CounterCapture capture(gpuprof::CounterOptions{});
  work();
  return capture.result();
#else
  // A gpuprof without CounterCapture: the work still runs (its timing is
  // kept), and the result says why it has no counters.
  work();
  gpuprof::CounterSet set;
  set.note = "this gpuprof has no CounterCapture (gpuprof/counters.hpp)";
  return set;
#endif
}

}  // namespace transformer::profile
