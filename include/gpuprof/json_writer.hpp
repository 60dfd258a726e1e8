// gpuprof/json_writer.hpp: a small streaming JSON writer.
//
// The report writers and the example programs build their JSON with it, so
// escaping and number formatting are right in one place:
//   * strings: quote, backslash and control characters escaped; valid UTF-8
//     passes through; bytes that are not valid UTF-8 become U+FFFD, so the
//     output is always valid JSON.
//   * numbers: shortest text that reads back to the same double; NaN and
//     infinities (which JSON cannot express) are written as null.
//
// ```cpp
// #include <gpuprof/atomic_file.hpp>
// #include <gpuprof/json_writer.hpp>
// int main() {
//   gpuprof::JsonWriter json;
//   json.begin_object().member("name", "gemm").key("samples_ms");
//   json.begin_array(gpuprof::JsonWriter::one_line);
//   for (double x : {1.25, 1.5}) json.value(x);
//   json.end_array().end_object();
//   gpuprof::write_file_atomically("out.json", json.str());
// }
// ```
//
// Misuse (a value where a key is due, unbalanced ends, str() before the
// document is complete) throws gpuprof::Error.
#pragma once
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "config.hpp"
#include "detail/number_text.hpp"
#include "terminal_text.hpp"
#include "error.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

// `text` as a JSON string literal, quotes included.
inline std::string json_quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (std::size_t at = 0; at < text.size();) {
    const char c = text[at];
    const auto code = static_cast<unsigned char>(c);
    if (code >= 0x80) {
      const std::size_t length = utf8_sequence_length(text, at);
      if (length == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER for one bad byte
        ++at;
      } else {
        out.append(text, at, length);
        at += length;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (code < 0x20) {
          const char* hex = "0123456789abcdef";
          out += "\\u00";
          out += hex[code >> 4];
          out += hex[code & 0xF];
        } else {
          out += c;
        }
    }
    ++at;
  }
  out += '"';
  return out;
}
}  // namespace detail

class JsonWriter {
 public:
  // How a container lays out its members: one per line (indented), or all on
  // one line (arrays of numbers, one trace event per line).
  enum Layout { multi_line, one_line };

  explicit JsonWriter(int indent_width = 2) : indent_width_(indent_width) {}

  JsonWriter& begin_object(Layout layout = multi_line) { return open('{', layout); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array(Layout layout = multi_line) { return open('[', layout); }
  JsonWriter& end_array() { return close(']'); }

  JsonWriter& key(std::string_view name) {
    if (open_.empty() || !open_.back().is_object || open_.back().key_written)
      misuse("key \"" + std::string(name) + "\" outside an object or after another key");
    separate();
    text_ += detail::json_quoted(name);
    text_ += ": ";
    open_.back().key_written = true;
    return *this;
  }

  JsonWriter& value(std::string_view text) { return scalar(detail::json_quoted(text)); }
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  JsonWriter& value(const std::string& text) { return value(std::string_view(text)); }
  JsonWriter& value(bool flag) { return scalar(flag ? "true" : "false"); }
  JsonWriter& value(std::nullptr_t) { return scalar("null"); }
  template <class Number,
            std::enable_if_t<std::is_arithmetic_v<Number> && !std::is_same_v<Number, bool>, int> = 0>
  JsonWriter& value(Number number) {
    if constexpr (std::is_floating_point_v<Number>) {
      const std::string text = detail::shortest_decimal(static_cast<double>(number));
      return scalar(text.empty() ? "null" : text);
    } else {
      char text[24];
      const auto result = std::to_chars(text, text + sizeof text, number);
      return scalar(std::string(text, result.ptr));
    }
  }

  template <class Value>
  JsonWriter& member(std::string_view name, const Value& v) {
    key(name);
    return value(v);
  }

  // The document; throws while containers are still open or nothing was written.
  const std::string& str() const {
    if (!open_.empty() || text_.empty()) misuse("document is incomplete");
    return text_;
  }

 private:
  struct Container {
    bool is_object;
    Layout layout;
    bool has_members = false;
    bool key_written = false;  // object: a key awaits its value
  };

  [[noreturn]] static void misuse(const std::string& what) {
    throw Error("gpuprof::JsonWriter misuse: " + what);
  }

  // Writes the comma and line break that come before a new array element or key.
  void separate() {
    Container& parent = open_.back();
    if (parent.has_members) text_ += ',';
    if (parent.layout == multi_line) newline(open_.size());
    else if (parent.has_members) text_ += ' ';
    parent.has_members = true;
  }

  // Checks that a value may go here, and writes what must precede it.
  void before_value() {
    if (open_.empty()) {
      if (!text_.empty()) misuse("a second top-level value");
      return;
    }
    Container& parent = open_.back();
    if (parent.is_object) {
      if (!parent.key_written) misuse("value in an object without a key");
      parent.key_written = false;
    } else {
      separate();
    }
  }

  JsonWriter& scalar(const std::string& text) {
    before_value();
    text_ += text;
    return *this;
  }

  JsonWriter& open(char bracket, Layout layout) {
    before_value();
    // Inside a one-line container everything stays on that line.
    const bool inside_one_line = !open_.empty() && open_.back().layout == one_line;
    open_.push_back({bracket == '{', inside_one_line ? one_line : layout});
    text_ += bracket;
    return *this;
  }

  JsonWriter& close(char bracket) {
    const bool closes_object = bracket == '}';
    if (open_.empty() || open_.back().is_object != closes_object || open_.back().key_written)
      misuse(std::string("unbalanced '") + bracket + "'");
    const Container closing = open_.back();
    open_.pop_back();
    if (closing.has_members && closing.layout == multi_line) newline(open_.size());
    text_ += bracket;
    return *this;
  }

  void newline(std::size_t depth) {
    text_ += '\n';
    text_.append(depth * static_cast<std::size_t>(indent_width_), ' ');
  }

  int indent_width_;
  std::string text_;
  std::vector<Container> open_;
};

GPUPROF_NAMESPACE_END
