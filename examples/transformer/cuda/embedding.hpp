// cuda/embedding.hpp: token embedding lookup and its backward pass.
//
// The backward pass is a deterministic scatter-add: the host groups the
// positions of the batch by token id once per batch (set_batch), and one
// thread per (vocabulary row, vector of columns) sums the gradient rows of that
// token's positions in a fixed order and writes the whole table, so no
// atomics and no separate zeroing pass are needed.
#pragma once
#include <cstdint>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "cuda/split_master.hpp"

namespace transformer::cuda {

// Positions of token v are positions[offsets[v] .. offsets[v+1]).
struct TokenGroups {
  std::vector<std::int32_t> offsets;    // vocab + 1
  std::vector<std::int32_t> positions;  // tokens.size()
};
// Ids must already be checked to lie in [0, vocab).
TokenGroups group_positions_by_token(const std::vector<std::int32_t>& tokens, int vocab);

// out[i, :] = table[tokens[i], :] for rows i < rows: the fp32 residual
// stream, from master weights (fp32 or split, exact either way).
void embedding_forward(const std::int32_t* tokens, MasterWeights table, float* out, int rows, int d,
                       cudaStream_t stream);

// dtable[v, :] = Σ over positions p of token v of dout[p, :] (zero rows for
// absent tokens), summed in fp32 and rounded once to Grad (float or bf16).
template <class Grad>
void embedding_backward(const std::int32_t* offsets, const std::int32_t* positions, const float* dout,
                        Grad* dtable, int vocab, int d, cudaStream_t stream);

}  // namespace transformer::cuda
