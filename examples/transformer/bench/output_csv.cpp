// bench/output_csv.cpp: the rows as CSV (RFC 4180 quoting), same columns as the JSON rows.
#include <charconv>
#include <cmath>

#include "output.hpp"
#include "row_fields.hpp"

namespace transformer::bench {
namespace {

std::string csv_cell(const FieldValue& value) {
  struct Visitor {
    std::string operator()(std::nullptr_t) const { return ""; }
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(std::int64_t number) const { return std::to_string(number); }
    std::string operator()(double number) const {
      if (!std::isfinite(number)) return "";
      char text[32];
      const auto result = std::to_chars(text, text + sizeof text, number);
      return std::string(text, result.ptr);
    }
    std::string operator()(const std::string& text) const {
      if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
      std::string quoted = "\"";
      for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
      return quoted + "\"";
    }
  };
  return std::visit(Visitor{}, value);
}

}  // namespace

std::string results_csv(const BenchResults& results) {
  std::string csv;
  const auto append_line = [&csv](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) csv += (i ? "," : "") + cells[i];
    csv += "\n";
  };
  std::vector<std::string> header;
  for (const auto& field : row_fields(ResultRow{})) header.push_back(field.first);
  append_line(header);
  for (const ResultRow& row : results.rows) {
    std::vector<std::string> cells;
    for (const auto& field : row_fields(row)) cells.push_back(csv_cell(field.second));
    append_line(cells);
  }
  return csv;
}

}  // namespace transformer::bench
