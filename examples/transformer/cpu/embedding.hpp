// cpu/embedding.hpp: token embedding lookup (no positional term, no scaling).
#pragma once
#include <cstdint>
#include <vector>

#include "cpu/tensor.hpp"

namespace transformer::cpu {

// table [V, d], tokens (N ids) -> out [N, d] (resized); std::invalid_argument
// for an id outside [0, V).
// out.row(i) = table.row(tokens[i]).
template <class T>
void embedding_forward(const MatrixCRef<T>& table, const std::vector<std::int32_t>& tokens, Matrix<T>& out);

// dout [N, d]: dtable.row(tokens[i]) += dout.row(i). dtable is [V, d]; repeated
// tokens accumulate.
template <class T>
void embedding_backward(const MatrixCRef<T>& dout, const std::vector<std::int32_t>& tokens,
                        MatrixRef<T> dtable);

}  // namespace transformer::cpu
