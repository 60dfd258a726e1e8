// cuda/cross_entropy.hpp: mean cross-entropy over the rows of the logits,
// stable (row max subtracted), fp32 math on logits of the activation type.
//
// The forward pass keeps each row's logsumexp; the backward pass is then a
// single elementwise pass that turns the logits into their gradient in place,
// (softmax − onehot)/rows, so no second [rows, vocab] buffer exists.
//
// Logit rows are `ld` = padded_to_vectors(vocab) apart (vector_width.hpp): the
// padding columns are not logits, never enter the softmax, and come out of
// the backward pass as zeros.
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

namespace transformer::cuda {

// logits [rows, vocab] (row stride ld) -> logsumexp [rows], row_loss [rows]
// (scratch) and *mean_loss (one float, device), reduced in a fixed order.
// Throws std::invalid_argument unless ld is a multiple of kVec, ≥ vocab, and
// logits is vector-aligned.
template <class Act>
void cross_entropy_forward(const Act* logits, const std::int32_t* targets, float* logsumexp, float* row_loss,
                           float* mean_loss, int rows, int vocab, int ld, cudaStream_t stream);

// logits -> d(mean loss)/d(logits), in place (padding columns set to 0).
template <class Act>
void cross_entropy_backward(Act* logits_to_dlogits, const std::int32_t* targets, const float* logsumexp,
                            int rows, int vocab, int ld, cudaStream_t stream);

}  // namespace transformer::cuda
