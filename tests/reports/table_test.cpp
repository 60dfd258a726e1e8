// Tests of gpuprof::Table (table.hpp): aligned text with UTF-8 widths,
// markdown and CSV renderings, and the cell formatters.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <gpuprof/error.hpp>
#include <gpuprof/table.hpp>

using gpuprof::Align;
using gpuprof::Table;

namespace {
Table sample() {
  Table table({{"name"}, {"ms", Align::right}});
  table.add_row({"gemm", "12.50"});
  table.add_row({"x → y", "3.1"});  // 5 code points, 7 bytes
  return table;
}
}  // namespace

TEST_CASE("text: widest cell sets the width, code points not bytes, no trailing spaces") {
  CHECK(sample().text() ==
        "name      ms\n"
        "gemm   12.50\n"
        "x → y    3.1\n");
  std::ostringstream out;
  sample().print(out);
  CHECK(out.str() == sample().text());
}

TEST_CASE("text: indent, gap, rule and minimum widths") {
  Table table({{"a", Align::left, 4}, {"b", Align::right}, {"c"}});
  table.add_row({"x", "10", ""});
  CHECK(table.text({"> ", " | ", true}) ==
        "> a    |  b | c\n"
        "> -------------\n"
        "> x    | 10 |\n");
}

TEST_CASE("text: a table without rows is its header") {
  const Table table({{"one"}, {"two", Align::right}});
  CHECK(table.text() == "one  two\n");
}

TEST_CASE("markdown: alignment row, pipes, backslashes and HTML escaped, line breaks as spaces") {
  Table table({{"kernel"}, {"ms", Align::right}});
  table.add_row({"f<a|b>\\x", "1\n2"});
  table.add_row({"<img src=x onerror=alert(1)>", "\x1b[2J"});
  CHECK(table.markdown() ==
        "| kernel | ms |\n"
        "|:---|---:|\n"
        "| f&lt;a\\|b&gt;\\\\x | 1 2 |\n"
        "| &lt;img src=x onerror=alert(1)&gt; | \\\\x1b\\[2J |\n");
}

TEST_CASE(
    "text: control characters and bytes that are not UTF-8 are shown escaped, not sent to the terminal") {
  Table table({{"scope"}});
  table.add_row({"\x1b]0;owned\x07\x1b[2J"});
  table.add_row({"tab\there, C1 \xc2\x9b, bad \xff, ok \xc2\xb1 \xe2\x86\x92"});
  CHECK(table.text() ==
        "scope\n"
        "\\x1b]0;owned\\x07\\x1b[2J\n"
        "tab\\x09here, C1 \\u009b, bad \\xff, ok \xc2\xb1 \xe2\x86\x92\n");
  CHECK(gpuprof::terminal_safe("\xe2\x86") == "\\xe2\\x86");  // a truncated sequence
}

TEST_CASE("csv: RFC 4180 quoting, headers quoted only when asked") {
  Table table({{"name"}, {"n", Align::right}});
  table.add_row({"void f<int, 2>(\"x\")", "3"});
  CHECK(table.csv() == "name,n\n\"void f<int, 2>(\"\"x\"\")\",3\n");
  CHECK(table.csv(gpuprof::CsvHeaders::quoted) == "\"name\",\"n\"\n\"void f<int, 2>(\"\"x\"\")\",3\n");
}

TEST_CASE("a row that does not match the columns is an error") {
  Table table({{"a"}, {"b"}});
  CHECK_THROWS_AS(table.add_row({"only one"}), gpuprof::Error);
  table.add_row({"1", "2"});
  CHECK_THROWS_AS(table.add_column({"late"}), gpuprof::Error);
}

TEST_CASE("cell formatters") {
  CHECK(gpuprof::format_fixed(2.0 / 3.0, 2) == "0.67");
  CHECK(gpuprof::format_significant(1234.5678) == "1235");  // about four significant digits
  CHECK(gpuprof::format_significant(12.345678) == "12.35");
  CHECK(gpuprof::format_significant(0.000123456) == "0.000123");
  CHECK(gpuprof::format_significant(std::nan("")) == "-");
  CHECK(gpuprof::shortest_decimal(0.1) == "0.1");
  CHECK(gpuprof::shortest_decimal(std::numeric_limits<double>::infinity()).empty());
  CHECK(gpuprof::display_width("±²→") == 3);
}
