// bench/row_fields.hpp: the columns of a result row, in order, as typed
// values. The JSON and CSV writers both walk this one list, so the two files
// always carry the same columns under the same names.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "result_row.hpp"

namespace transformer::bench {

// null (not measured / not applicable), flag, text, integer, real. Text is
// always a std::string: a bare literal would convert to bool.
using FieldValue = std::variant<std::nullptr_t, bool, std::string, std::int64_t, double>;
using RowFields = std::vector<std::pair<std::string, FieldValue>>;

RowFields row_fields(const ResultRow& row);

}  // namespace transformer::bench
