// gpuprof/quantile_sketch.hpp: quantiles of a stream of durations in bounded
// memory, with a bounded relative error, mergeable across threads and ranks.
//
// A DDSketch (Masson, Rim and Lee, VLDB 2019): value x > 0 falls in bucket
// ceil(log_gamma(x)) with gamma = (1 + alpha) / (1 - alpha), and a bucket's
// quantile estimate 2 gamma^i / (gamma + 1) is within a fraction alpha of
// every value in it. So any quantile it returns is within alpha (relative)
// of a sample of the exact rank. With the default alpha = 0.5 %, durations
// from 1 ns to 1 hour (in ms) take at most ~2,900 buckets (23 KB); a run's
// timings usually span a few hundred. Merging two sketches of the same alpha
// adds their bucket counts: the merge is exact, order does not matter.
// Zero and values below 1e-9 (sub-femtosecond in ms) share one bucket read as 0;
// negative values are not durations and go to it too (counted as such).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

class QuantileSketch {
 public:
  static constexpr double default_relative_error = 0.005;
  static constexpr double smallest_positive = 1e-9;

  QuantileSketch() : QuantileSketch(default_relative_error) {}
  explicit QuantileSketch(double relative_error) : alpha_(relative_error) {
    if (!(relative_error > 0 && relative_error < 0.5))
      throw std::invalid_argument("gpuprof: a quantile sketch's relative error must lie in (0, 0.5)");
    gamma_ = (1 + alpha_) / (1 - alpha_);
    log_gamma_ = std::log(gamma_);
  }

  void add(double x) { add(x, 1); }
  void add(double x, std::uint64_t count) {
    if (count == 0 || std::isnan(x)) return;
    count_ += count;
    if (!(x >= smallest_positive)) {
      zero_count_ += count;
      return;
    }
    add_to_bucket(bucket_of(x), count);
  }
  // Adds the counts of `other`, which must have the same relative error.
  void merge(const QuantileSketch& other) {
    if (other.alpha_ != alpha_)
      throw std::invalid_argument("gpuprof: quantile sketches of different relative errors do not merge");
    count_ += other.count_;
    zero_count_ += other.zero_count_;
    for (std::size_t i = 0; i < other.counts_.size(); ++i)
      if (other.counts_[i]) add_to_bucket(other.offset_ + static_cast<int>(i), other.counts_[i]);
  }

  // The q-quantile, q in [0, 1] (clamped), of rank q * (n - 1) rounded down,
  // within relative_error() of that order statistic; 0 when empty.
  double quantile(double q) const {
    if (count_ == 0) return 0;
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_ - 1));
    std::uint64_t seen = zero_count_;
    if (rank < seen) return 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (rank < seen) return value_of(offset_ + static_cast<int>(i));
    }
    return value_of(offset_ + static_cast<int>(counts_.size()) - 1);
  }

  double relative_error() const noexcept { return alpha_; }
  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t zero_count() const noexcept { return zero_count_; }
  // Non-empty buckets as (index, count), ascending: what the JSON writer keeps.
  std::vector<std::pair<int, std::uint64_t>> buckets() const {
    std::vector<std::pair<int, std::uint64_t>> out;
    for (std::size_t i = 0; i < counts_.size(); ++i)
      if (counts_[i]) out.emplace_back(offset_ + static_cast<int>(i), counts_[i]);
    return out;
  }
  // The reader's way back from buckets(): `index` as buckets() gave it.
  void add_bucket(int index, std::uint64_t count) {
    if (count == 0) return;
    if (index < min_index || index > max_index)
      throw std::invalid_argument("gpuprof: quantile sketch bucket index out of range");
    count_ += count;
    add_to_bucket(index, count);
  }
  void add_zeros(std::uint64_t count) {
    count_ += count;
    zero_count_ += count;
  }

  // Bucket indices a duration in ms can have (1e-9 ms to 1e30 ms at alpha >= 1e-4): a
  // bound on a reader's allocation.
  static constexpr int min_index = -120'000, max_index = 350'000;

 private:
  int bucket_of(double x) const {
    const double index = std::ceil(std::log(x) / log_gamma_);
    return index < min_index ? min_index : index > max_index ? max_index : static_cast<int>(index);
  }
  double value_of(int index) const { return 2 * std::pow(gamma_, index) / (gamma_ + 1); }
  void add_to_bucket(int index, std::uint64_t count) {
    if (counts_.empty()) {
      offset_ = index;
      counts_.assign(1, 0);
    } else if (index < offset_) {
      counts_.insert(counts_.begin(), static_cast<std::size_t>(offset_ - index), 0);
      offset_ = index;
    } else if (index >= offset_ + static_cast<int>(counts_.size())) {
      counts_.resize(static_cast<std::size_t>(index - offset_) + 1, 0);
    }
    counts_[static_cast<std::size_t>(index - offset_)] += count;
  }

  double alpha_, gamma_ = 1, log_gamma_ = 0;
  std::uint64_t count_ = 0, zero_count_ = 0;
  int offset_ = 0;                     // bucket index of counts_[0]
  std::vector<std::uint64_t> counts_;  // dense from offset_
};

GPUPROF_NAMESPACE_END
