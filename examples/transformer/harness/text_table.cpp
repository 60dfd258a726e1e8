// harness/text_table.cpp: column widths are the widest cell; numeric columns are
// right-aligned so digits line up.
#include "harness/text_table.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ostream>

namespace transformer::harness {
namespace {

// A number, or a placeholder that stands in a numeric column ("-" for none,
// "OOM" for a configuration that did not fit).
bool looks_numeric(const std::string& cell) {
  if (cell == "-" || cell == "OOM") return true;
  if (cell.empty()) return false;
  const std::size_t digit = cell[0] == '-' || cell[0] == '+' ? 1 : 0;
  return digit < cell.size() && std::isdigit(static_cast<unsigned char>(cell[digit]));
}

}  // namespace

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> widths(header_.size(), 0);
  const auto widen = [&widths](const std::vector<std::string>& cells) {
    if (cells.size() > widths.size()) widths.resize(cells.size(), 0);
    for (std::size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  };
  widen(header_);
  for (const auto& row : rows_) widen(row);

  // A column whose every cell reads as a number is right-aligned, header included.
  std::vector<bool> right_aligned(widths.size(), !rows_.empty());
  for (const auto& row : rows_)
    for (std::size_t i = 0; i < widths.size(); ++i)
      if (i >= row.size() || !looks_numeric(row[i])) right_aligned[i] = false;

  const auto print_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string padding(widths[i] - cells[i].size(), ' ');
      const bool last = i + 1 == cells.size();
      if (right_aligned[i]) {
        line += padding + cells[i];
      } else {
        line += cells[i] + (last ? "" : padding);
      }
      if (!last) line += "  ";
    }
    out << line << '\n';
  };
  print_line(header_);
  std::size_t total = 0;
  for (const std::size_t width : widths) total += width + 2;
  out << std::string(total > 2 ? total - 2 : 0, '-') << '\n';
  for (const auto& row : rows_) print_line(row);
}

std::string fixed(const std::optional<double>& value, int digits) {
  if (!value) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, *value);
  return text;
}

std::string gib(const std::optional<double>& bytes) {
  if (!bytes) return "-";
  return fixed(*bytes / (1024.0 * 1024.0 * 1024.0), 2);
}

}  // namespace transformer::harness
