// gpuprof/detail/markup.hpp: text made safe inside HTML and SVG, and numbers
// as SVG writes them, for the writers that produce markup (html.hpp and the
// SVG pictures).
#pragma once
#include <cstdio>
#include <string>

#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
inline std::string html_escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

// Coordinates in SVG: one decimal is finer than a pixel.
inline std::string svg_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

// Numbers in labels: three significant digits.
inline std::string svg_short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}
}  // namespace detail

GPUPROF_NAMESPACE_END
