// ddp/batches.hpp: each rank's share of the global batch. Rank r trains on
// its own token batch (harness::make_token_batch under a seed of its own);
// the global batch is the ranks' batches stacked in rank order, which is what
// a single-GPU run must see to match the data-parallel one (the mean loss of
// equal shares is the mean of the shares' mean losses).
#pragma once
#include "harness/run.hpp"
#include "model/backend.hpp"

namespace transformer::ddp {

harness::TokenBatch rank_batch(const RunConfig& per_rank, int rank);
// [world × batch, ctx]: the ranks' batches one after another.
harness::TokenBatch global_batch(const RunConfig& per_rank, int world);

}  // namespace transformer::ddp
