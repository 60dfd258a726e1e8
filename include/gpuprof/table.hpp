// gpuprof/table.hpp: a table of already formatted cells, rendered as aligned
// text for a terminal, as a GitHub markdown table or as CSV. The report, the
// kernel summaries and the examples all print their tables through it.
//
// ```cpp
// #include <gpuprof/table.hpp>
// #include <iostream>
// int main() {
//   gpuprof::Table table({{"kernel"}, {"ms", gpuprof::Align::right}});
//   table.add_row({"gemm", gpuprof::format_fixed(1.25, 2)});
//   table.print(std::cout);  // columns padded to their widest cell
//   std::cout << table.markdown() << table.csv();
// }
// ```
//
// Widths count code points, not bytes, so cells with UTF-8 symbols (→, ±, ²)
// line up; no wide (two-column) glyphs are expected.
#pragma once
#include <algorithm>
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"
#include "detail/number_text.hpp"
#include "error.hpp"
#include "terminal_text.hpp"

GPUPROF_NAMESPACE_BEGIN

// Cell formatting: "%.<decimals>f"; about four significant digits without an
// exponent ("-" for NaN and infinities); the shortest text that reads back as
// the same double ("" for NaN and infinities).
using detail::format_fixed;
using detail::format_significant;
using detail::shortest_decimal;

enum class Align { left, right };

struct Column {
  std::string header;
  Align align = Align::left;
  std::size_t min_width = 0;  // in code points; the widest cell widens it further
};

// How Table::text lays out lines. Trailing spaces are never written.
struct TextLayout {
  std::string indent;      // before every line
  std::string gap = "  ";  // between columns
  bool rule = false;       // a line of dashes under the header
};

// How Table::csv quotes the header row: like any field (only when it holds a
// comma, quote or line break), or always (as nsys does).
enum class CsvHeaders { as_needed, quoted };

// Terminal columns a UTF-8 string takes: one per code point.
inline std::size_t display_width(std::string_view text) {
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // not a continuation byte
  }));
}

namespace detail {
// RFC 4180: quoted when it holds a comma, quote or line break (C++ names hold
// commas all the time), or always with `force_quotes`.
inline std::string csv_field(const std::string& text, bool force_quotes = false) {
  if (!force_quotes && text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// A tree's row name, indented one `indent` per level of `depth`. Past
// max_indent_levels the indentation stops growing and the depth is written
// out ("[depth 40] name"), so n nested scopes print in O(n) text, not
// O(n * depth).
inline constexpr int max_indent_levels = 16;
inline std::string indented_name(const std::string& name, int depth, const std::string& indent) {
  std::string text;
  for (int level = 0; level < depth && level < max_indent_levels; ++level) text += indent;
  if (depth > max_indent_levels) text += "[depth " + std::to_string(depth) + "] ";
  return text + name;
}

// A markdown cell: line breaks as spaces, other control characters as
// terminal_safe writes them, pipes and backslashes escaped, '<' and '>' as
// entities so a name cannot become HTML in the rendered page ('&' stays, so
// writers may use &nbsp;), and brackets and "://" escaped so that a name
// cannot become a live link or image ("[c](url)", "![t](url)", a bare URL).
inline std::string markdown_cell(const std::string& text) {
  std::string lines_joined = text;
  for (char& c : lines_joined)
    if (c == '\n' || c == '\r') c = ' ';
  const std::string safe = terminal_safe(lines_joined);
  std::string escaped;
  for (std::size_t at = 0; at < safe.size(); ++at) {
    const char c = safe[at];
    if (c == '<') escaped += "&lt;";
    else if (c == '>') escaped += "&gt;";
    else if (c == '|' || c == '\\' || c == '[' || c == ']') escaped += std::string("\\") + c;
    else if (c == ':' && safe.compare(at + 1, 2, "//") == 0) escaped += ":\\";  // ":\//": no autolink
    else escaped += c;
  }
  return escaped;
}
}  // namespace detail

class Table {
 public:
  Table() = default;
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  Table& add_column(Column column) {
    if (!rows_.empty()) throw Error("Table: columns must be added before the first row");
    columns_.push_back(std::move(column));
    return *this;
  }
  // Throws gpuprof::Error unless the row has one cell per column.
  Table& add_row(std::vector<std::string> cells) {
    if (cells.size() != columns_.size())
      throw Error("Table: a row of " + std::to_string(cells.size()) + " cells in a table of " +
                  std::to_string(columns_.size()) + " columns");
    rows_.push_back(std::move(cells));
    return *this;
  }

  const std::vector<Column>& columns() const { return columns_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }

  // Cells as terminal_safe writes them: a table is for a terminal. Columns
  // are padded to their widest cell up to max_padded_width code points; a
  // wider cell overflows its row alone, so one long name cannot pad every
  // row of a long table.
  static constexpr std::size_t max_padded_width = 160;
  std::string text(const TextLayout& layout = {}) const {
    std::vector<std::string> headers;
    for (const Column& column : columns_) headers.push_back(terminal_safe(column.header));
    std::vector<std::vector<std::string>> rows;
    for (const auto& row : rows_) {
      rows.emplace_back();
      for (const std::string& cell : row) rows.back().push_back(terminal_safe(cell));
    }
    std::vector<std::size_t> widths;
    for (std::size_t c = 0; c < columns_.size(); ++c)
      widths.push_back(std::max(columns_[c].min_width, display_width(headers[c])));
    for (const auto& row : rows)
      for (std::size_t c = 0; c < row.size(); ++c)
        widths[c] = std::max(widths[c], std::min(display_width(row[c]), max_padded_width));

    std::string out;
    const auto add_line = [&](std::string line) {
      line.erase(line.find_last_not_of(' ') + 1);
      out += line + '\n';
    };
    const auto add_cells = [&](const auto& cell_of) {
      std::string line = layout.indent;
      for (std::size_t c = 0; c < columns_.size(); ++c) {
        const std::string& cell = cell_of(c);
        const std::size_t width = display_width(cell);
        const std::string padding(width < widths[c] ? widths[c] - width : 0, ' ');
        if (c > 0) line += layout.gap;
        line += columns_[c].align == Align::right ? padding + cell : cell + padding;
      }
      add_line(std::move(line));
    };
    add_cells([&](std::size_t c) -> const std::string& { return headers[c]; });
    if (layout.rule) {
      std::size_t total = widths.empty() ? 0 : display_width(layout.gap) * (widths.size() - 1);
      for (std::size_t width : widths) total += width;
      add_line(layout.indent + std::string(total, '-'));
    }
    for (const auto& row : rows) add_cells([&](std::size_t c) -> const std::string& { return row[c]; });
    return out;
  }

  void print(std::ostream& out, const TextLayout& layout = {}) const { out << text(layout); }

  // A GitHub table; left columns ":---", right ones "---:".
  std::string markdown() const {
    const auto line = [](const auto& cells) {
      std::string text = "|";
      for (const std::string& cell : cells) text += " " + detail::markdown_cell(cell) + " |";
      return text + "\n";
    };
    std::vector<std::string> headers;
    for (const Column& column : columns_) headers.push_back(column.header);
    std::string out = line(headers) + "|";
    for (const Column& column : columns_) out += column.align == Align::right ? "---:|" : ":---|";
    out += '\n';
    for (const auto& row : rows_) out += line(row);
    return out;
  }

  // RFC 4180 fields, one record per line ending in "\n".
  std::string csv(CsvHeaders headers = CsvHeaders::as_needed) const {
    const auto line = [](const auto& cells, bool force_quotes) {
      std::string text;
      for (std::size_t c = 0; c < cells.size(); ++c)
        text += (c ? "," : "") + detail::csv_field(cells[c], force_quotes);
      return text + "\n";
    };
    std::vector<std::string> header_cells;
    for (const Column& column : columns_) header_cells.push_back(column.header);
    std::string out = line(header_cells, headers == CsvHeaders::quoted);
    for (const auto& row : rows_) out += line(row, false);
    return out;
  }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

GPUPROF_NAMESPACE_END
