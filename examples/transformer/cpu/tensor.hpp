// cpu/tensor.hpp: the Eigen types every CPU layer speaks.
//
// Activations are row-major [rows = tokens (batch·ctx, batch-major), cols =
// features], matching the CUDA backend's buffers, so a test can copy one into
// the other without transposing. Layer inputs are taken as Eigen::Ref, which
// binds a Matrix, a Map over the flat parameter buffer, or a column block
// (e.g. the q|k part of a qkv matrix) without a copy.
#pragma once
#include <Eigen/Core>

namespace transformer::cpu {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

// Read-only view of a row-major matrix (any outer stride).
template <class T>
using MatrixCRef = Eigen::Ref<const Matrix<T>>;
// Writable view of a correctly sized row-major matrix: used for parameter
// gradients, which layers accumulate into (+=) so the caller zeroes them.
template <class T>
using MatrixRef = Eigen::Ref<Matrix<T>>;
template <class T>
using VectorCRef = Eigen::Ref<const Vector<T>>;
template <class T>
using VectorRef = Eigen::Ref<Vector<T>>;

}  // namespace transformer::cpu
