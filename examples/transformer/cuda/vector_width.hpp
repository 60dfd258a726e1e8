// cuda/vector_width.hpp: the width of the kernels' vector accesses and the
// row padding that keeps them whole. Plain C++ (the launchers' callers and
// the tests size padded buffers with it).
//
// Rows whose length may be anything (the logits' vocab columns, the attention
// scores' ctx columns) are stored with their row stride rounded up to a
// multiple of kVec, so every row starts on a vector boundary; the padding
// columns hold no values and every kernel that reads such a row masks them.
// The flat parameter buffers (weights, gradients, AdamW moments) are padded
// to whole vectors the same way, the padding kept at zero. Shapes whose
// dimensions are multiples of kVec get no padding at all.
#pragma once

namespace transformer::cuda {

// Elements per vector access: 8 bf16 = one 16-byte load; 8 floats = two.
constexpr int kVec = 8;

// `count` rounded up to whole vectors: the row stride of a padded row, or the
// size of a padded flat buffer.
template <class Count>
constexpr Count padded_to_vectors(Count count) {
  return (count + kVec - 1) / kVec * kVec;
}

}  // namespace transformer::cuda
