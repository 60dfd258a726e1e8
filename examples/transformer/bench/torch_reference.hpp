// bench/torch_reference.hpp: reads scripts/torch_reference.py's JSON-lines output
// and joins its figures onto our rows. The script writes one flat object per line
// (strings, numbers, booleans), so a small dedicated reader suffices.
#pragma once
#include <map>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "harness/bench_results.hpp"

namespace transformer::bench {

// A flat JSON object: every value a scalar. Nested objects or arrays are an error.
using FlatJsonValue = std::variant<std::nullptr_t, bool, double, std::string>;
using FlatJsonObject = std::map<std::string, FlatJsonValue>;

// Throws std::runtime_error saying where the text stops being a flat object.
FlatJsonObject parse_flat_json_object(const std::string& line);

class TorchReference {
 public:
  // Reads every non-empty line; throws std::runtime_error naming the file and
  // line on unreadable input. When a key repeats (the script appends to its
  // file), the last line wins: it is the most recent run.
  static TorchReference read(const std::string& path);
  static TorchReference from_lines(const std::vector<std::string>& lines, const std::string& origin);

  // Sets row.torch when a line matches (size, ctx, mode, precision, batch).
  // Lines without a batch count as the default batch, 4.
  void join(harness::ResultRow& row) const;
  std::size_t size() const { return figures_.size(); }

 private:
  using Key = std::tuple<std::string, int, std::string, std::string, int>;  // + batch
  std::map<Key, harness::TorchFigures> figures_;
};

}  // namespace transformer::bench
