// bench/token_batch.cpp: uniform token ids from the model's counter-based generator.
#include "token_batch.hpp"

#include "model/init.hpp"

namespace transformer::bench {

TokenBatch make_token_batch(const RunConfig& config, std::uint64_t seed) {
  const std::size_t count = static_cast<std::size_t>(config.batch) * config.ctx;
  const auto vocab = static_cast<std::uint64_t>(config.model.vocab);
  // Distinct streams for tokens and targets, and distinct from the parameters'
  // stream of the same seed (model/init.hpp hashes the seed the same way).
  const std::uint64_t token_stream = splitmix64(seed ^ 0x746F6B656E73ull);     // "tokens"
  const std::uint64_t target_stream = splitmix64(seed ^ 0x74617267657473ull);  // "targets"
  TokenBatch batch;
  batch.tokens.resize(count);
  batch.targets.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    // The modulo bias for a vocabulary of 10^4 out of 2^64 is below 1e-15.
    batch.tokens[i] = static_cast<std::int32_t>(splitmix64(token_stream + i) % vocab);
    batch.targets[i] = static_cast<std::int32_t>(splitmix64(target_stream + i) % vocab);
  }
  return batch;
}

}  // namespace transformer::bench
