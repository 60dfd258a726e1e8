// bench/npy.cpp: the .npy encoder (format:
// numpy.org/devdocs/reference/generated/numpy.lib.format.html).
#include "bench/npy.hpp"

#include <cstring>
#include <stdexcept>

namespace transformer::bench {
namespace {

std::size_t element_count(const NpyShape& shape) {
  std::size_t count = 1;
  for (const std::size_t extent : shape) count *= extent;
  return count;
}

// Bytes are emitted least significant first whatever the host's order, so the
// '<' in the header is true by construction.
template <typename T>
void append_little_endian(std::string& out, const std::vector<T>& values) {
  static_assert(sizeof(T) == 4, "4-byte elements only");
  const std::size_t start = out.size();
  out.resize(start + values.size() * 4);
  char* cursor = &out[start];
  for (const T value : values) {
    std::uint32_t bits;
    std::memcpy(&bits, &value, 4);
    for (int byte = 0; byte < 4; ++byte) *cursor++ = static_cast<char>((bits >> (8 * byte)) & 0xFFu);
  }
}

template <typename T>
std::string encode(const std::vector<T>& values, const NpyShape& shape, const char* descr) {
  if (element_count(shape) != values.size())
    throw std::invalid_argument("npy: shape " + npy_shape_text(shape) + " holds " +
                                std::to_string(element_count(shape)) + " elements, got " +
                                std::to_string(values.size()));
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + npy_shape_text(shape) + ", }";
  // Magic (6) + version (2) + header length (2) + header + '\n', padded with
  // spaces to a multiple of 64 so the data is aligned, as NumPy itself does.
  constexpr std::size_t preamble = 10;
  const std::size_t unpadded = preamble + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  if (header.size() > 0xFFFF) throw std::invalid_argument("npy: header too long for format 1.0");

  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  append_little_endian(out, values);
  return out;
}

}  // namespace

std::string npy_shape_text(const NpyShape& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(shape[i]);
  }
  if (shape.size() == 1) text += ",";
  return text + ")";
}

std::string npy_encode(const std::vector<float>& values, const NpyShape& shape) {
  return encode(values, shape, "<f4");
}

std::string npy_encode(const std::vector<std::int32_t>& values, const NpyShape& shape) {
  return encode(values, shape, "<i4");
}

}  // namespace transformer::bench
