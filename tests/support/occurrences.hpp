// tests/support/occurrences.hpp: how often a piece of text occurs in a
// document (overlapping matches counted), for tests of text writers.
#pragma once
#include <cstddef>
#include <string>

namespace gpuprof_test {

inline std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

}  // namespace gpuprof_test
