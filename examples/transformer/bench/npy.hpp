// bench/npy.hpp: NumPy .npy (format version 1.0) encoding of fp32 and int32
// arrays, little-endian and in C order, so `numpy.load` reads what --dump
// writes without any other library on either side.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace transformer::bench {

using NpyShape = std::vector<std::size_t>;  // {} is a scalar

// The whole file: magic, version, header dict padded to a multiple of 64
// bytes, then the elements. Throws std::invalid_argument when the element
// count does not match the shape.
std::string npy_encode(const std::vector<float>& values, const NpyShape& shape);
std::string npy_encode(const std::vector<std::int32_t>& values, const NpyShape& shape);

// "(2, 3)", "(5,)" or "()", as NumPy writes a shape.
std::string npy_shape_text(const NpyShape& shape);

}  // namespace transformer::bench
