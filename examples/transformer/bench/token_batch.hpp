// bench/token_batch.hpp: the benchmark's random token ids and targets, a pure
// function of (seed, batch, ctx, vocab) so every backend and every study sees
// the same batch.
#pragma once
#include <cstdint>
#include <vector>

#include "backend.hpp"

namespace transformer::bench {

struct TokenBatch {
  std::vector<std::int32_t> tokens;   // [batch, ctx], row-major, in [0, vocab)
  std::vector<std::int32_t> targets;  // [batch, ctx]
};

TokenBatch make_token_batch(const RunConfig& config, std::uint64_t seed);

}  // namespace transformer::bench
