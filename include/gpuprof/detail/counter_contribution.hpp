// gpuprof/detail/counter_contribution.hpp: what a CounterCapture adds to each
// Profiler::report(): the set of its last measure() or collect() (CUPTI
// gives one scope range per path, like the report's nodes), and the
// ceilings of its GPU. report() may run on another thread than the capture.
#pragma once
#include <mutex>

#include "../config.hpp"
#include "../counter_data.hpp"
#include "../report_model.hpp"
#include "../roofline.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class CounterContribution {
 public:
  void set_ceilings(const RooflineCeilings& ceilings) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ceilings_ = ceilings;
  }
  RooflineCeilings ceilings() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return ceilings_;
  }
  // Replaces the set kept before: each measurement stands alone.
  void keep(const CounterSet& set) {
    const std::lock_guard<std::mutex> lock(mutex_);
    last_ = set;
    measured_ = true;
  }
  // Nothing before the first measurement.
  void add_to(Report& report) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!measured_) return;
    report.counters = last_;
    report.ceilings = ceilings_;
  }

 private:
  mutable std::mutex mutex_;
  bool measured_ = false;
  CounterSet last_;
  RooflineCeilings ceilings_;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
