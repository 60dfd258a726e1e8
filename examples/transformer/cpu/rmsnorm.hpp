// cpu/rmsnorm.hpp: RMSNorm, y = x · rsqrt(mean(x²) + eps) · g, row by row.
#pragma once
#include "cpu/tensor.hpp"

namespace transformer::cpu {

// x [N, d], gain [d] -> y [N, d] (resized); inv_rms [N] (resized) keeps
// rsqrt(mean(x²) + eps) of each row for the backward pass.
template <class T>
void rmsnorm_forward(const MatrixCRef<T>& x, const VectorCRef<T>& gain, T eps, Matrix<T>& y,
                     Vector<T>& inv_rms);

// dy [N, d] -> dx [N, d] (resized, overwritten); dgain [d] += Σ_rows dy ⊙ x · inv_rms.
template <class T>
void rmsnorm_backward(const MatrixCRef<T>& dy, const MatrixCRef<T>& x, const VectorCRef<T>& gain,
                      const Vector<T>& inv_rms, Matrix<T>& dx, VectorRef<T> dgain);

}  // namespace transformer::cpu
