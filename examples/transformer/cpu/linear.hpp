// cpu/linear.hpp: a bias-free linear layer, y = x·Wᵀ with W stored [out, in].
#pragma once
#include "cpu/tensor.hpp"

namespace transformer::cpu {

// x [N, in], w [out, in] -> y [N, out] (resized).
template <class T>
void linear_forward(const MatrixCRef<T>& x, const MatrixCRef<T>& w, Matrix<T>& y);

// dy [N, out] -> dx [N, in] (resized, overwritten); dw [out, in] += dyᵀ·x.
template <class T>
void linear_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const MatrixCRef<T>& w, Matrix<T>& dx,
                     MatrixRef<T> dw);

}  // namespace transformer::cpu
