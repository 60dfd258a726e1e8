// cpu/rope.hpp: rotary position embedding on interleaved pairs.
//
// Pair j of a head, (x[2j], x[2j+1]), at position p is rotated by the angle
// p·θ^(−2j/d_head), j = 0 … d_head/2 − 1; positions restart at 0 for every
// sequence of the batch. Angles are computed in double and cos/sin then cast
// to T, so float and double runs differ only by T's rounding.
#pragma once
#include "cpu/tensor.hpp"

namespace transformer::cpu {

// In place on x [batch·ctx, heads·d_head], viewed as `heads` heads of
// d_head = cols / heads features. To rotate q and k of a fused qkv matrix in
// one call, pass qkv.leftCols(2·d) with heads = 2·n_heads.
template <class T>
void rope_forward(MatrixRef<T> x, int batch, int ctx, int heads, T theta);

// The transpose of rope_forward (a rotation by the opposite angle), applied in
// place to the gradient dx of the rotated values.
template <class T>
void rope_backward(MatrixRef<T> dx, int batch, int ctx, int heads, T theta);

}  // namespace transformer::cpu
