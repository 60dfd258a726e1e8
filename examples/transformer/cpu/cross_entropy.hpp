// cpu/cross_entropy.hpp: mean cross-entropy over all N = batch·ctx positions,
// loss = mean_i (logsumexp(logits_i) − logits_i[target_i]), with the row max
// subtracted inside logsumexp so large logits do not overflow.
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/tensor.hpp"

namespace transformer::cpu {

// logits [N, V], targets (N ids; std::invalid_argument outside [0, V)) -> mean loss;
// logsumexp [N] (resized) is kept for the backward pass.
template <class T>
T cross_entropy_forward(const MatrixCRef<T>& logits, const std::vector<std::int32_t>& targets,
                        Vector<T>& logsumexp);

// dlogits [N, V] (resized, overwritten) = dloss · (softmax(logits) − onehot(target)) / N.
template <class T>
void cross_entropy_backward(const MatrixCRef<T>& logits, const std::vector<std::int32_t>& targets,
                            const Vector<T>& logsumexp, T dloss, Matrix<T>& dlogits);

}  // namespace transformer::cpu
