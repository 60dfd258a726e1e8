// ddp/buckets.cpp: the bucket arithmetic of buckets.hpp.
#include "ddp/buckets.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace transformer::ddp {
namespace {

std::string text(GradientRange range) {
  return "[" + std::to_string(range.begin) + ", " + std::to_string(range.end) + ")";
}

}  // namespace

BucketPlanner::BucketPlanner(std::size_t total, std::size_t cap)
    : total_(total), cap_(cap), next_end_(total) {
  if (total == 0) throw std::invalid_argument("BucketPlanner: no gradients to reduce");
  if (cap == 0) throw std::invalid_argument("BucketPlanner: the bucket cap must be at least 1");
}

std::optional<GradientRange> BucketPlanner::add(GradientRange ready) {
  if (ready.begin >= ready.end || ready.end != next_end_)
    throw std::logic_error("BucketPlanner: gradient range " + text(ready) +
                           " is not the non-empty range ending at " + std::to_string(next_end_) +
                           " (ranges must come in descending order, adjacent, within [0, " +
                           std::to_string(total_) + "))");
  next_end_ = ready.begin;
  open_ = GradientRange{ready.begin, open_ ? open_->end : ready.end};
  if (open_->size() < cap_) return std::nullopt;
  const GradientRange full = *open_;
  open_.reset();
  return full;
}

std::optional<GradientRange> BucketPlanner::finish() {
  if (next_end_ != 0)
    throw std::logic_error("BucketPlanner: backward announced no gradients below " +
                           std::to_string(next_end_) + "; they would never be reduced");
  next_end_ = total_;
  return std::exchange(open_, std::nullopt);
}

std::vector<GradientRange> plan_buckets(const std::vector<GradientRange>& ready, std::size_t total,
                                        std::size_t cap) {
  BucketPlanner planner(total, cap);
  std::vector<GradientRange> buckets;
  for (const GradientRange range : ready)
    if (const auto bucket = planner.add(range)) buckets.push_back(*bucket);
  if (const auto last = planner.finish()) buckets.push_back(*last);
  return buckets;
}

std::vector<GradientRange> backward_gradient_ranges(const ModelConfig& config, std::size_t padded_total) {
  const ParameterLayout layout(config);
  if (padded_total < layout.total)
    throw std::invalid_argument("backward_gradient_ranges: padded total " + std::to_string(padded_total) +
                                " below the layout's " + std::to_string(layout.total));
  const std::size_t head = layout.find("lm_head").offset;
  const std::size_t final_norm = layout.find("final_norm").offset;
  const BlockOffsets block(config);
  std::vector<GradientRange> ranges = {{head, padded_total}, {final_norm, head}};
  for (int layer = config.layers - 1; layer >= 0; --layer)
    ranges.push_back({layout.block_offset(layer), layout.block_offset(layer) + block.size});
  ranges.push_back({0, layout.block_offset(0)});
  return ranges;
}

}  // namespace transformer::ddp
