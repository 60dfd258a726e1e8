// cuda/cross_entropy.hpp: mean cross-entropy over the rows of the logits,
// stable (row max subtracted), fp32 math on logits of the activation type.
//
// The forward pass keeps each row's logsumexp; the backward pass is then a
// single elementwise pass that turns the logits into their gradient in place,
// (softmax − onehot)/rows, so no second [rows, vocab] buffer exists.
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

namespace transformer::cuda {

// logits [rows, vocab] -> logsumexp [rows], row_loss [rows] (scratch) and
// *mean_loss (one float, device), reduced in a fixed order.
template <class Act>
void cross_entropy_forward(const Act* logits, const std::int32_t* targets, float* logsumexp,
                           float* row_loss, float* mean_loss, int rows, int vocab,
                           cudaStream_t stream);

// logits -> d(mean loss)/d(logits), in place.
template <class Act>
void cross_entropy_backward(Act* logits_to_dlogits, const std::int32_t* targets,
                            const float* logsumexp, int rows, int vocab, cudaStream_t stream);

}  // namespace transformer::cuda
