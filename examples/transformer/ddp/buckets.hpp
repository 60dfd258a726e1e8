// ddp/buckets.hpp: which gradients are all-reduced together. As PyTorch DDP
// does, ranges announced by backward (GradientReadyHook: descending,
// adjacent) are gathered into a bucket until it holds at least the cap, and
// the bucket is reduced at once, while backward goes on; whatever is left when
// backward ends is the last bucket. Fewer, larger all-reduces cost less
// launch and latency; smaller ones start sooner and hide more of the
// communication behind backward. A range larger than the cap is a bucket of
// its own (never split: it is written by one layer's backward at once).
//
// Pure host arithmetic, no CUDA: the tests check it on any machine.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "model/backend.hpp"

namespace transformer::ddp {

class BucketPlanner {
 public:
  // `total`: the elements the ranges must cover ([0, total)); `cap`: the
  // elements at which a bucket closes (≥ 1). Throws std::invalid_argument.
  BucketPlanner(std::size_t total, std::size_t cap);

  // The next announced range; returns the bucket it closes, if any. Throws
  // std::logic_error for a range that is empty, outside [0, total) or not
  // directly below the previous one.
  std::optional<GradientRange> add(GradientRange ready);
  // End of backward: the open bucket, if any. Throws std::logic_error when
  // the ranges did not reach 0 (a gradient would go unreduced). Resets for
  // the next backward.
  std::optional<GradientRange> finish();

 private:
  std::size_t total_, cap_;
  std::size_t next_end_;  // where the next range must end
  std::optional<GradientRange> open_;
};

// The buckets a planner forms from ranges announced in this order (what one
// backward does), for reports and tests.
std::vector<GradientRange> plan_buckets(const std::vector<GradientRange>& ready, std::size_t total,
                                        std::size_t cap);

// The ranges the CUDA backend announces for `config`'s layout, in order
// (model/cuda_model.cu's backward): lm_head (with `padded_total - layout.total`
// elements of padding), final_norm, blocks L-1 ... 0, embedding.
std::vector<GradientRange> backward_gradient_ranges(const ModelConfig& config, std::size_t padded_total);

}  // namespace transformer::ddp
