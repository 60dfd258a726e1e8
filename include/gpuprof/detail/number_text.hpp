// gpuprof/detail/number_text.hpp: numbers as text, the one place the writers
// (JSON, CSV, tables) and the examples format them.
#pragma once
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
// Shortest decimal text that parses back to exactly `value` ("0.1", "1e-05",
// "12345"); "" for NaN and infinities, which the caller must spell.
inline std::string shortest_decimal(double value) {
  if (!std::isfinite(value)) return {};
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

// printf's "%.<decimals>f".
inline std::string format_fixed(double value, int decimals) {
  char text[400];  // room for any double with 6 decimals
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

// About four significant digits without an exponent: "1235", "12.35",
// "0.1234", "0.000123"; "-" for NaN and infinities.
inline std::string format_significant(double value) {
  if (!std::isfinite(value)) return "-";
  const double magnitude = std::fabs(value);
  const int decimals = magnitude > 0 ? 3 - static_cast<int>(std::floor(std::log10(magnitude))) : 0;
  return format_fixed(value, std::clamp(decimals, 0, 6));
}
}  // namespace detail

GPUPROF_NAMESPACE_END
