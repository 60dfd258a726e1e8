// gpuprof/online_summary.hpp: a Summary of a stream of samples in bounded
// memory, for scopes left on for a whole run.
//
// OnlineSamples keeps count, mean, variance (Welford), min and max exactly; a
// QuantileSketch (quantile_sketch.hpp) for the quantiles; and a seeded uniform
// reservoir (Algorithm L) for what needs every sample: compare's tests, the
// outlier count. Until the reservoir is full, summary() is summarize() of all
// samples; past it, Summary::estimated says which figures are estimates. Two
// OnlineSamples merge (threads, ranks): docs/profiling.md#what-a-report-counts.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
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

// A uniform sample of at most `capacity` of the values offered. Vitter's
// Algorithm L (Li 1994): once full, the number of values to pass over before
// the next one kept is drawn ahead, so add() is a count and a comparison, with
// random draws only at the k ln(n / k) replacements, not one per value.
//
// sorted() sorts the sample in place and keeps the slots changed since, so
// the next call sorts only those and merges them in: a reservoir read at every
// report costs its changes plus one pass, not a full sort. Which slot a
// replacement takes is uniform either way, so the sample stays uniform; the
// same run read at the same points keeps the same samples.
class SampleReservoir {
 public:
  explicit SampleReservoir(std::size_t capacity = default_reservoir_capacity, std::uint64_t seed = 1)
      : capacity_(capacity), state_(seed) {}

  void add(double x) {
    ++seen_;
    if (samples_.size() < capacity_) {
      samples_.push_back(x);
      if (samples_.size() == capacity_) start_skipping();
      return;
    }
    if (capacity_ == 0 || seen_ < next_pick_) return;
    const auto slot = static_cast<std::size_t>(next_random() % capacity_);
    samples_[slot] = x;
    note_changed(slot);
    draw_next_pick(shrunk(keep_below_));
  }
  // Adds `other`'s values as if they had been offered here: all of them while
  // both together fit, else a draw without replacement from both, each side
  // chosen in proportion to how many values it still stands for.
  void merge(const SampleReservoir& other) {
    if (samples_.size() + other.samples_.size() <= capacity_ && seen_ == samples_.size() &&
        other.seen_ == other.samples_.size()) {
      samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end());
      seen_ += other.seen_;
      resume();
      return;
    }
    std::vector<double> mine = std::move(samples_), theirs = other.samples_;
    double weight_mine = static_cast<double>(seen_), weight_theirs = static_cast<double>(other.seen_);
    const double per_mine = mine.empty() ? 0 : weight_mine / static_cast<double>(mine.size());
    const double per_theirs = theirs.empty() ? 0 : weight_theirs / static_cast<double>(theirs.size());
    samples_.clear();
    while (samples_.size() < capacity_ && (!mine.empty() || !theirs.empty())) {
      const double u = unit_random() * (weight_mine + weight_theirs);
      const bool take_mine = theirs.empty() || (!mine.empty() && u < weight_mine);
      std::vector<double>& from = take_mine ? mine : theirs;
      const std::size_t pick = static_cast<std::size_t>(next_random() % from.size());
      samples_.push_back(from[pick]);
      from[pick] = from.back();
      from.pop_back();
      (take_mine ? weight_mine : weight_theirs) -= take_mine ? per_mine : per_theirs;
    }
    seen_ += other.seen_;
    resume();
  }
  // A reader's way back: `samples` drawn uniformly from `seen` values.
  void restore(std::vector<double> samples, std::uint64_t seen) {
    samples_ = std::move(samples);
    if (samples_.size() > capacity_) samples_.resize(capacity_);
    seen_ = std::max<std::uint64_t>(seen, samples_.size());
    resume();
  }

  // The samples, in slot order (ascending as of the last sorted()).
  const std::vector<double>& samples() const noexcept { return samples_; }
  // The samples, ascending.
  const std::vector<double>& sorted() {
    if (sorted_count_ == samples_.size() && changed_.empty() && !unsorted_) return samples_;
    if (unsorted_ || sorted_count_ == 0) {
      std::sort(samples_.begin(), samples_.end());
    } else {
      // Changed slots and those appended since: out, sorted, merged back
      // into the untouched ones, which are still in order.
      std::sort(changed_.begin(), changed_.end());
      changed_.erase(std::unique(changed_.begin(), changed_.end()), changed_.end());
      for (std::size_t slot = sorted_count_; slot < samples_.size(); ++slot) changed_.push_back(slot);
      std::vector<double> fresh;
      fresh.reserve(changed_.size());
      std::size_t kept = 0, next_changed = 0;
      for (std::size_t slot = 0; slot < samples_.size(); ++slot) {
        if (next_changed < changed_.size() && changed_[next_changed] == slot) {
          fresh.push_back(samples_[slot]);
          ++next_changed;
        } else {
          samples_[kept++] = samples_[slot];
        }
      }
      std::sort(fresh.begin(), fresh.end());
      std::copy(fresh.begin(), fresh.end(), samples_.begin() + static_cast<std::ptrdiff_t>(kept));
      std::inplace_merge(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(kept),
                         samples_.end());
    }
    changed_.clear();
    unsorted_ = false;
    sorted_count_ = samples_.size();
    return samples_;
  }
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
  double unit_random() noexcept { return static_cast<double>(next_random() >> 11) * 0x1.0p-53; }  // [0, 1)
  double open_unit_random() noexcept { return (static_cast<double>(next_random() >> 11) + 0.5) * 0x1.0p-53; }

  // Algorithm L's state is W, the largest uniform key among the kept values
  // (those with the k smallest keys of all offered): the values passed over
  // before the next key below W are geometric in W, and taking one shrinks W
  // by a factor u^(1/k).
  double shrunk(double largest_key) noexcept {
    return largest_key * std::exp(std::log(open_unit_random()) / static_cast<double>(capacity_));
  }
  void draw_next_pick(double largest_key) noexcept {
    keep_below_ = largest_key;
    const double skip = std::floor(std::log(open_unit_random()) / std::log1p(-keep_below_));
    next_pick_ = skip < 1e18 ? seen_ + static_cast<std::uint64_t>(skip) + 1
                             : std::numeric_limits<std::uint64_t>::max();
  }
  // Once full, a uniform sample of seen_ values: W is the k-th smallest of
  // seen_ uniform keys, Beta(k, seen - k + 1), drawn as a ratio of Gamma
  // variates (u^(1/k) when nothing was passed over yet).
  void start_skipping() {
    if (capacity_ == 0 || samples_.size() < capacity_) return;
    if (seen_ == capacity_) return draw_next_pick(shrunk(1.0));
    struct Bits {
      SampleReservoir* self;
      using result_type = std::uint64_t;
      static constexpr result_type min() { return 0; }
      static constexpr result_type max() { return ~result_type{0}; }
      result_type operator()() { return self->next_random(); }
    } bits{this};
    const double kept = std::gamma_distribution<double>(static_cast<double>(capacity_))(bits);
    const double passed = std::gamma_distribution<double>(static_cast<double>(seen_ - capacity_ + 1))(bits);
    draw_next_pick(kept / (kept + passed));
  }
  // After a merge or a restore: slots in no known order, and a fresh W.
  void resume() {
    unsorted_ = true;
    changed_.clear();
    start_skipping();
  }
  // Kept for sorted(); past a quarter of the sample, a full sort is cheaper.
  void note_changed(std::size_t slot) {
    if (unsorted_ || slot >= sorted_count_) return;
    if (changed_.size() >= capacity_ / 4) {
      unsorted_ = true;
      changed_.clear();
      return;
    }
    changed_.push_back(slot);
  }

  std::size_t capacity_;
  std::uint64_t state_;
  std::uint64_t seen_ = 0;
  std::uint64_t next_pick_ = 0;  // the seen_ count at which the next value is kept
  double keep_below_ = 1;        // Algorithm L's W
  std::vector<double> samples_;
  std::size_t sorted_count_ = 0;      // samples_[0, sorted_count_) ascending but for changed_
  std::vector<std::size_t> changed_;  // slots replaced since, in that prefix
  bool unsorted_ = false;             // too many changes to track: sort it all
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
    std::vector<double> sorted = reservoir_.samples();
    std::sort(sorted.begin(), sorted.end());
    return summary_of(std::move(sorted), options);
  }
  // summary(), sorting only the reservoir's slots changed since the last call
  // (SampleReservoir::sorted): what a report that runs every few steps calls.
  Summary incremental_summary(const SummaryOptions& options = {}) {
    return summary_of(reservoir_.sorted(), options);
  }

 private:
  Summary summary_of(std::vector<double> sorted, const SummaryOptions& options) const {
    if (reservoir_.holds_all()) {
      sorted.insert(sorted.end(), static_cast<std::size_t>(discarded_),
                    std::numeric_limits<double>::quiet_NaN());
      return summarize(std::move(sorted), options);
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
    s.sorted = std::move(sorted);
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
