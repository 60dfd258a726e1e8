// harness/cells.hpp: the harness's tables (gpuprof::Table): numbers as cells,
// with "-" for a value the run did not produce, and numeric columns
// right-aligned so digits line up.
#pragma once
#include <cctype>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gpuprof/table.hpp>

namespace transformer::harness {

// "%.<digits>f" of a value, or "-" when there is none.
inline std::string fixed(const std::optional<double>& value, int digits) {
  return value ? gpuprof::format_fixed(*value, digits) : "-";
}

// Bytes as GiB with two decimals, or "-".
inline std::string gib(const std::optional<double>& bytes) {
  if (!bytes) return "-";
  return fixed(*bytes / (1024.0 * 1024.0 * 1024.0), 2);
}

// A number, or a placeholder that stands in a numeric column ("-" for none,
// "OOM" for a configuration that did not fit).
inline bool looks_numeric(const std::string& cell) {
  if (cell == "-" || cell == "OOM") return true;
  if (cell.empty()) return false;
  const std::size_t digit = cell[0] == '-' || cell[0] == '+' ? 1 : 0;
  return digit < cell.size() && std::isdigit(static_cast<unsigned char>(cell[digit]));
}

// `header` over `rows`; a column whose every cell reads as a number is
// right-aligned, the rest left.
inline gpuprof::Table numbers_right_table(const std::vector<std::string>& header,
                                          std::vector<std::vector<std::string>> rows) {
  gpuprof::Table table;
  for (std::size_t c = 0; c < header.size(); ++c) {
    bool numeric = !rows.empty();
    for (const auto& row : rows) numeric = numeric && c < row.size() && looks_numeric(row[c]);
    table.add_column({header[c], numeric ? gpuprof::Align::right : gpuprof::Align::left});
  }
  for (auto& row : rows) table.add_row(std::move(row));
  return table;
}

// Columns two spaces apart, a rule of dashes under the header.
inline const gpuprof::TextLayout ruled_layout{"", "  ", true};

}  // namespace transformer::harness
