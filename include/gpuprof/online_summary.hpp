// gpuprof/online_summary.hpp: a Summary of a stream of samples in bounded
// memory, for scopes left on for a whole run.
//
// OnlineSamples keeps, over every finite sample added:
//   - count, mean and variance by Welford's update, min and max: exact;
//   - a QuantileSketch (quantile_sketch.hpp): quantiles within its relative
//     error (0.5 % by default) of a sample of that rank;
//   - a uniform reservoir of at most `reservoir_capacity` samples (Vitter's
//     Algorithm R, seeded: the same run keeps the same samples), which stands
//     for the distribution where every sample is needed: compare's tests,
//     the outlier count.
// While no more samples have been added than the reservoir holds, it holds
// them all and summary() is summarize() of them: every figure exactly as
// before. Past it, summary() says which figures are estimates
// (Summary::estimated). Two OnlineSamples merge (threads, ranks): exactly for
// the Welford figures and the sketch, as a uniform draw from both reservoirs
// weighted by how many samples each stands for.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "config.hpp"
#include "quantile_sketch.hpp"
#include "stats.hpp"

GPUPROF_NAMESPACE_BEGIN

// Samples a Summary keeps per scope and clock by default: 10,000 doubles
// (80 KB) bound compare's tests and the CI well below a run's noise, and
// a scope rarely runs fewer times in a short profile, so short profiles stay exact.
inline constexpr std::size_t default_reservoir_capacity = 10'000;

// A uniform sample of at most `capacity` of the values offered (Algorithm R).
class SampleReservoir {
 public:
  explicit SampleReservoir(std::size_t capacity = default_reservoir_capacity, std::uint64_t seed = 1)
      : capacity_(capacity), state_(seed) {}

  void add(double x) {
    ++seen_;
    if (samples_.size() < capacity_) {
      samples_.push_back(x);
      return;
    }
    const std::uint64_t slot = next_random() % seen_;  // keep with probability capacity / seen
    if (slot < capacity_) samples_[static_cast<std::size_t>(slot)] = x;
  }
  // Adds `other`'s values as if they had been offered here: all of them while
  // both together fit, else a draw without replacement from both, each side
  // chosen in proportion to how many values it still stands for.
  void merge(const SampleReservoir& other) {
    if (samples_.size() + other.samples_.size() <= capacity_ && seen_ == samples_.size() &&
        other.seen_ == other.samples_.size()) {
      samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
      seen_ += other.seen_;
      return;
    }
    std::vector<double> mine = std::move(samples_), theirs = other.samples_;
    double weight_mine = static_cast<double>(seen_), weight_theirs = static_cast<double>(other.seen_);
    const double per_mine = mine.empty() ? 0 : weight_mine / static_cast<double>(mine.size());
    const double per_theirs = theirs.empty() ? 0 : weight_theirs / static_cast<double>(theirs.size());
    samples_.clear();
    while (samples_.size() < capacity_ && (!mine.empty() || !theirs.empty())) {
      const double u = static_cast<double>(next_random() >> 11) * 0x1.0p-53 * (weight_mine + weight_theirs);
      const bool take_mine = theirs.empty() || (!mine.empty() && u < weight_mine);
      std::vector<double>& from = take_mine ? mine : theirs;
      const std::size_t pick = static_cast<std::size_t>(next_random() % from.size());
      samples_.push_back(from[pick]);
      from[pick] = from.back();
      from.pop_back();
      (take_mine ? weight_mine : weight_theirs) -= take_mine ? per_mine : per_theirs;
    }
    seen_ += other.seen_;
  }
  // A reader's way back: `samples` drawn uniformly from `seen` values.
  void restore(std::vector<double> samples, std::uint64_t seen) {
    samples_ = std::move(samples);
    if (samples_.size() > capacity_) samples_.resize(capacity_);
    seen_ = std::max<std::uint64_t>(seen, samples_.size());
  }

  const std::vector<double>& samples() const noexcept { return samples_; }
  std::uint64_t seen() const noexcept { return seen_; }
  std::size_t capacity() const noexcept { return capacity_; }
  bool holds_all() const noexcept { return seen_ == samples_.size(); }

 private:
  std::uint64_t next_random() noexcept {  // SplitMix64: deterministic, fast, good enough to sample
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }

  std::size_t capacity_;
  std::uint64_t state_;
  std::uint64_t seen_ = 0;
  std::vector<double> samples_;
};

class OnlineSamples {
 public:
  explicit OnlineSamples(std::size_t reservoir_capacity = default_reservoir_capacity,
                         double relative_error = QuantileSketch::default_relative_error,
                         std::uint64_t seed = 1)
      : sketch_(relative_error), reservoir_(reservoir_capacity, seed) {}

  void add(double x) {
    if (!std::isfinite(x)) {
      ++discarded_;
      return;
    }
    ++n_;
    const double delta = x - mean_;
    mean_ += delta / static_cast<double>(n_);
    m2_ += delta * (x - mean_);
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
    sketch_.add(x);
    reservoir_.add(x);
  }
  // Chan, Golub and LeVeque's pairwise update: exact up to rounding.
  void merge(const OnlineSamples& other) {
    if (other.n_ > 0) {
      const double total = static_cast<double>(n_ + other.n_);
      const double delta = other.mean_ - mean_;
      mean_ += delta * static_cast<double>(other.n_) / total;
      m2_ += other.m2_ + delta * delta * static_cast<double>(n_) * static_cast<double>(other.n_) / total;
      n_ += other.n_;
      min_ = std::min(min_, other.min_);
      max_ = std::max(max_, other.max_);
    }
    discarded_ += other.discarded_;
    sketch_.merge(other.sketch_);
    reservoir_.merge(other.reservoir_);
  }

  // A Summary's state again (a report read back, another rank's node): exact
  // when the Summary was, else its exact figures, its sketch and its sample.
  static OnlineSamples from_summary(const Summary& s,
                                    std::size_t reservoir_capacity = default_reservoir_capacity) {
    OnlineSamples out(std::max(reservoir_capacity, s.sorted.size()),
                      s.exact() ? QuantileSketch::default_relative_error : s.sketch.relative_error());
    if (s.exact()) {
      for (double x : s.sorted) out.add(x);
    } else {
      out.n_ = s.n;
      out.mean_ = s.mean;
      out.m2_ = s.stddev * s.stddev * static_cast<double>(s.n > 0 ? s.n - 1 : 0);
      out.min_ = s.min;
      out.max_ = s.max;
      out.sketch_ = s.sketch;
      out.reservoir_.restore(s.sorted, s.n);
    }
    out.discarded_ = s.discarded;
    return out;
  }

  std::uint64_t count() const noexcept { return n_; }
  std::uint64_t discarded() const noexcept { return discarded_; }
  const SampleReservoir& reservoir() const noexcept { return reservoir_; }
  const QuantileSketch& sketch() const noexcept { return sketch_; }

  Summary summary(const SummaryOptions& options = {}) const {
    if (reservoir_.holds_all()) {
      std::vector<double> all = reservoir_.samples();
      all.insert(all.end(), static_cast<std::size_t>(discarded_), std::numeric_limits<double>::quiet_NaN());
      return summarize(std::move(all), options);
    }
    Summary s;
    s.n = static_cast<std::size_t>(n_);
    s.discarded = static_cast<std::size_t>(discarded_);
    if (s.discarded > 0) {
      s.note = std::to_string(s.discarded) + " non-finite sample(s) left out";
      detail::add_unstable_reason(
          s, std::to_string(s.discarded) + " non-finite sample" + (s.discarded == 1 ? "" : "s") + " dropped");
    }
    s.min = min_;
    s.max = max_;
    s.mean = std::clamp(mean_, min_, max_);
    if (min_ != max_) s.stddev = std::sqrt(std::max(0.0, m2_) / static_cast<double>(n_ - 1));
    s.sorted = reservoir_.samples();
    std::sort(s.sorted.begin(), s.sorted.end());
    s.sketch = sketch_;
    s.estimated = "quantiles from a sketch (relative error " +
                  detail::format_threshold(sketch_.relative_error()) +
                  "), outliers from a uniform sample of " + std::to_string(s.sorted.size()) + " of " +
                  std::to_string(s.n) + "; n, mean, stddev, min, max and the CI exact";
    s.median = s.percentile(50);
    s.q1 = s.percentile(25);
    s.q3 = s.percentile(75);
    detail::judge_summary(s, options);
    return s;
  }

 private:
  std::uint64_t n_ = 0, discarded_ = 0;
  double mean_ = 0, m2_ = 0;
  double min_ = std::numeric_limits<double>::infinity(), max_ = -std::numeric_limits<double>::infinity();
  QuantileSketch sketch_;
  SampleReservoir reservoir_;
};

GPUPROF_NAMESPACE_END
