// gpuprof/detail/tick_clock.hpp: the cheap time stamp a scope takes, and its
// conversion to host_now_ns() nanoseconds (the steady_clock axis every
// Report uses).
//
// On x86-64 with an invariant TSC a scope reads the time-stamp counter
// (about 10 ns, against 25-35 ns for steady_clock::now() in the VMs gpuprof
// runs on) and report() converts the ticks piecewise linearly through
// calibration points at most a second apart; anywhere else ticks are
// steady_clock ns. Why, and the error bound:
// docs/internals.md#the-scope-clock-tsc-ticks-to-steady_clock-detailtick_clockhpp
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "../clock.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "tsc.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

struct TickPoint {
  std::int64_t ticks;
  std::int64_t ns;
};

// Converts ticks with a fixed copy of the calibration points (taken by
// TickClock::converter(), so a report converts without holding a lock).
class TickConverter {
 public:
  // `points` empty: ticks are steady_clock ns already.
  explicit TickConverter(std::vector<TickPoint> points) : points_(std::move(points)) {
    if (points_.size() == 1)
      throw Error(
          "gpuprof: the time-stamp counter did not advance for 20 ms of calibration; "
          "host times cannot be converted");
    // Each segment's rate once, not a division per conversion.
    for (std::size_t i = 1; i < points_.size(); ++i) rates_.push_back(rate(points_[i - 1], points_[i]));
    if (!points_.empty()) whole_rate_ = rate(points_.front(), points_.back());
  }

  std::int64_t to_ns(std::int64_t ticks) const {
    if (points_.empty()) return ticks;
    const auto after = std::upper_bound(points_.begin(), points_.end(), ticks,
                                        [](std::int64_t t, const TickPoint& p) { return t < p.ticks; });
    // Outside the points (a scope that ended while report() read), the rate
    // over the whole span: the best determined one.
    if (after == points_.begin()) return along(points_.front(), whole_rate_, ticks);
    if (after == points_.end()) return along(points_.back(), whole_rate_, ticks);
    const auto segment = static_cast<std::size_t>(after - points_.begin()) - 1;
    return along(points_[segment], rates_[segment], ticks);
  }

 private:
  // double, not long double: within a segment (points at most about a second
  // apart) a tick distance times a rate is off by under 0.001 ns, and the x87
  // conversion of a long double to an integer cost a report ~100 ns a record.
  static double rate(const TickPoint& a, const TickPoint& b) {
    return static_cast<double>(b.ns - a.ns) / static_cast<double>(b.ticks - a.ticks);
  }
  // The line through `from` with slope `ns_per_tick`.
  static std::int64_t along(const TickPoint& from, double ns_per_tick, std::int64_t ticks) {
    return from.ns + static_cast<std::int64_t>(static_cast<double>(ticks - from.ticks) * ns_per_tick);
  }

  std::vector<double> rates_;  // rates_[i]: from points_[i] to points_[i + 1]
  double whole_rate_ = 0;
  std::vector<TickPoint> points_;
};

class TickClock {
 public:
  TickClock() { calibrate(); }
  TickClock(const TickClock&) = delete;
  TickClock& operator=(const TickClock&) = delete;

  // Scopes keep a copy of next_due() and call this once their ticks reach it;
  // the copy is then read again (another thread may have added the point).
  void calibrate_if_due(std::int64_t ticks) {
    if (ticks >= next_due()) calibrate();
  }
  std::int64_t next_due() const noexcept { return next_due_.load(std::memory_order_relaxed); }
  // Adds a point now; nothing to do for steady_clock ticks.
  void calibrate() {
#if GPUPROF_DETAIL_HAVE_TSC
    if (!ticks_are_tsc()) return;
    // Measured under the lock, so points are appended in the order taken.
    const std::lock_guard<std::mutex> lock(mutex_);
    const TickPoint point = measure_point();
    // A counter that went backwards (cores out of step) adds no point.
    if (!points_.empty() && (point.ticks <= points_.back().ticks || point.ns <= points_.back().ns)) return;
    points_.push_back(point);
    next_due_.store(point.ticks + ticks_per_second(), std::memory_order_relaxed);
#endif
  }
  // A fresh point, then a copy of them all. A conversion needs two points:
  // when the fresh one was refused (the counter stepped back, e.g. after the
  // VM moved), keep trying for up to 20 ms rather than fail the report.
  TickConverter converter() {
    calibrate();
    const std::int64_t give_up_ns = host_now_ns() + 20'000'000;
    while (point_count() == 1 && host_now_ns() < give_up_ns) calibrate();
    const std::lock_guard<std::mutex> lock(mutex_);
    return TickConverter(points_);
  }

 private:
  std::size_t point_count() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return points_.size();
  }
#if GPUPROF_DETAIL_HAVE_TSC
  // The steady_clock read with the tightest pair of TSC reads around it, of a
  // few tries (an interrupt or a preemption widens one try, rarely all). The
  // fences keep each rdtsc on its side of the clock read.
  static TickPoint measure_point() noexcept {
    TickPoint best{0, 0};
    std::int64_t best_width = std::numeric_limits<std::int64_t>::max();
    for (int attempt = 0; attempt < 5; ++attempt) {
      load_fence();
      const auto before = read_tsc();
      load_fence();
      const std::int64_t ns = host_now_ns();
      load_fence();
      const auto after = read_tsc();
      if (after - before < best_width) {
        best_width = after - before;
        best = {before + (after - before) / 2, ns};
      }
    }
    return best;
  }
  // Ticks in about a second, from the points so far (caller holds mutex_).
  // Until they span 10 ms, 1e9 ticks: at most a second at any TSC rate of
  // 1 GHz or more, so points are never further apart than promised.
  std::int64_t ticks_per_second() const {
    const TickPoint& first = points_.front();
    const TickPoint& last = points_.back();
    if (last.ns - first.ns < 10'000'000) return 1'000'000'000;
    return static_cast<std::int64_t>(static_cast<long double>(last.ticks - first.ticks) * 1e9L /
                                     static_cast<long double>(last.ns - first.ns));
  }
#endif

  std::mutex mutex_;
  std::vector<TickPoint> points_;  // strictly increasing in both members
  // Never reached with steady_clock ticks: they need no calibration.
  std::atomic<std::int64_t> next_due_{std::numeric_limits<std::int64_t>::max()};
};

}  // namespace detail
GPUPROF_NAMESPACE_END
