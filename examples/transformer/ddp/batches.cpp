// ddp/batches.cpp: per-rank seeds and the stacked global batch.
#include "ddp/batches.hpp"

#include "model/init.hpp"

namespace transformer::ddp {

harness::TokenBatch rank_batch(const RunConfig& per_rank, int rank) {
  // Rank 0 gets the seed's own batch: a one-rank run trains on what
  // transformer_bench trains on.
  const std::uint64_t seed =
      rank == 0 ? per_rank.seed : splitmix64(per_rank.seed ^ static_cast<std::uint64_t>(rank));
  return harness::make_token_batch(per_rank, seed);
}

harness::TokenBatch global_batch(const RunConfig& per_rank, int world) {
  harness::TokenBatch all;
  for (int rank = 0; rank < world; ++rank) {
    const harness::TokenBatch mine = rank_batch(per_rank, rank);
    all.tokens.insert(all.tokens.end(), mine.tokens.begin(), mine.tokens.end());
    all.targets.insert(all.targets.end(), mine.targets.begin(), mine.targets.end());
  }
  return all;
}

}  // namespace transformer::ddp
