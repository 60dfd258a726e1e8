// Tests of the .npy encoder: each file is parsed back by an independent
// reader written here from the format's specification (magic, version 1.0,
// little-endian header length, a Python dict literal, 64-byte alignment,
// little-endian C-order data).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/npy.hpp"

using namespace transformer::bench;

namespace {

struct ParsedNpy {
  std::string descr;
  std::string fortran_order;
  std::string shape;
  std::vector<std::uint32_t> words;  // the data, 4-byte little-endian words
};

// The value text of `key` in the header's dict literal.
std::string dict_value(const std::string& header, const std::string& key) {
  const std::string marker = "'" + key + "': ";
  const auto start = header.find(marker);
  REQUIRE(start != std::string::npos);
  const auto value_start = start + marker.size();
  // A tuple holds commas of its own: it ends at its closing parenthesis.
  const auto end =
      header[value_start] == '(' ? header.find(')', value_start) + 1 : header.find(',', value_start);
  return header.substr(value_start, end - value_start);
}

ParsedNpy parse_npy(const std::string& bytes) {
  REQUIRE(bytes.size() >= 10);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  REQUIRE(bytes[6] == 1);
  REQUIRE(bytes[7] == 0);
  const std::size_t header_length = static_cast<unsigned char>(bytes[8]) |
                                    (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
  CHECK((10 + header_length) % 64 == 0);
  REQUIRE(bytes.size() >= 10 + header_length);
  const std::string header = bytes.substr(10, header_length);
  CHECK(header.back() == '\n');
  CHECK(header.front() == '{');
  ParsedNpy parsed;
  parsed.descr = dict_value(header, "descr");
  parsed.fortran_order = dict_value(header, "fortran_order");
  parsed.shape = dict_value(header, "shape");
  const std::string data = bytes.substr(10 + header_length);
  REQUIRE(data.size() % 4 == 0);
  for (std::size_t at = 0; at < data.size(); at += 4) {
    std::uint32_t word = 0;
    for (int byte = 3; byte >= 0; --byte)
      word = (word << 8) | static_cast<unsigned char>(data[at + static_cast<std::size_t>(byte)]);
    parsed.words.push_back(word);
  }
  return parsed;
}

template <typename T>
std::vector<T> as_values(const std::vector<std::uint32_t>& words) {
  std::vector<T> values(words.size());
  for (std::size_t i = 0; i < words.size(); ++i) std::memcpy(&values[i], &words[i], 4);
  return values;
}

}  // namespace

TEST_CASE("float32 matrix round-trips through the npy encoding") {
  std::mt19937 generator(1234);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> values(7 * 5);
  for (float& value : values) value = normal(generator);
  values[3] = -0.0f;

  const ParsedNpy parsed = parse_npy(npy_encode(values, {7, 5}));
  CHECK(parsed.descr == "'<f4'");
  CHECK(parsed.fortran_order == "False");
  CHECK(parsed.shape == "(7, 5)");
  const std::vector<float> read_back = as_values<float>(parsed.words);
  REQUIRE(read_back.size() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    CHECK(std::memcmp(&read_back[i], &values[i], 4) == 0);  // bit-exact, sign of zero included
}

TEST_CASE("int32 array keeps negative values and a 1-D shape has a trailing comma") {
  const std::vector<std::int32_t> values = {0, -1, 2147483647, -2147483647 - 1, 9999};
  const ParsedNpy parsed = parse_npy(npy_encode(values, {5}));
  CHECK(parsed.descr == "'<i4'");
  CHECK(parsed.shape == "(5,)");
  CHECK(as_values<std::int32_t>(parsed.words) == values);
}

TEST_CASE("scalar and three-dimensional shapes") {
  const ParsedNpy scalar = parse_npy(npy_encode(std::vector<float>{2.5f}, {}));
  CHECK(scalar.shape == "()");
  CHECK(as_values<float>(scalar.words) == std::vector<float>{2.5f});

  const std::vector<float> cube(2 * 3 * 4, 1.0f);
  CHECK(parse_npy(npy_encode(cube, {2, 3, 4})).shape == "(2, 3, 4)");
}

TEST_CASE("a shape that does not match the element count is refused") {
  CHECK_THROWS_AS(npy_encode(std::vector<float>(6), {4, 2}), std::invalid_argument);
  CHECK_THROWS_AS(npy_encode(std::vector<std::int32_t>(2), {}), std::invalid_argument);
}
