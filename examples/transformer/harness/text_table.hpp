// harness/text_table.hpp: a column-aligned text table (text left, numbers right),
// shared by the results table and the studies' tables.
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace transformer::harness {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "%.<digits>f" of a value, or "-" when there is none.
std::string fixed(const std::optional<double>& value, int digits);
// Bytes as GiB with two decimals, or "-".
std::string gib(const std::optional<double>& bytes);

}  // namespace transformer::harness
