// gpuprof/detail/json_reader.hpp: a small, strict JSON reader, so the
// command-line tools (gpuprof-compare, gpuprof-report) and the tests can read
// back what gpuprof's writers produce.
//
//   const gpuprof::detail::Json doc = gpuprof::detail::parse_json_file(path);
//   doc["nodes"][0]["host_ms"]["mean"].as_number();
//   doc["instances"][0]["host_begin_ns"].as_int64(); // exact, no double rounding
//
// Strict on purpose (RFC 8259, no duplicate keys, nesting at most 256, the
// sizes of input_limits.hpp), so a writer bug cannot slip through a lenient
// reader; errors throw gpuprof::InputError saying where and what. The rules:
// docs/report-schema.md#reading-a-report-back-read_report_json.
#pragma once
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <limits>
#include <type_traits>
#include <vector>

#include "../config.hpp"
#include "../error.hpp"
#include "../input_limits.hpp"
#include "../terminal_text.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

class Json {
 public:
  enum class Type { null, boolean, number, string, array, object };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::null; }
  bool is_number() const { return type_ == Type::number; }
  bool is_string() const { return type_ == Type::string; }
  bool is_array() const { return type_ == Type::array; }
  bool is_object() const { return type_ == Type::object; }

  bool as_bool() const {
    expect(Type::boolean);
    return boolean_;
  }
  double as_number() const {
    expect(Type::number);
    return number_;
  }
  // The number exactly as an integer of type Integer (no double rounding);
  // throws if it has a fraction or exponent or does not fit (a negative
  // number never fits an unsigned type).
  template <class Integer>
  Integer as_integer() const {
    static_assert(std::is_integral_v<Integer>);
    expect(Type::number);
    Integer value = 0;
    const auto result = std::from_chars(text_.data(), text_.data() + text_.size(), value);
    if (result.ec != std::errc() || result.ptr != text_.data() + text_.size())
      throw InputError("JSON number " + text_ + " is not an integer from " +
                       std::to_string(std::numeric_limits<Integer>::min()) + " to " +
                       std::to_string(std::numeric_limits<Integer>::max()));
    return value;
  }
  std::int64_t as_int64() const { return as_integer<std::int64_t>(); }
  const std::string& as_string() const {
    expect(Type::string);
    return text_;
  }

  // Elements of an array or members of an object.
  std::size_t size() const {
    if (type_ != Type::array && type_ != Type::object)
      throw InputError("JSON " + type_name(type_) + " has no size");
    return items_.size();
  }
  // Any integer type, so doc[0] does not collide with the const char* key lookup.
  template <class Index, std::enable_if_t<std::is_integral_v<Index>, int> = 0>
  const Json& operator[](Index index) const {
    expect(Type::array);
    bool negative = false;
    if constexpr (std::is_signed_v<Index>) negative = index < 0;
    if (negative || static_cast<std::size_t>(index) >= items_.size())
      throw InputError("JSON array index " + std::to_string(index) + " outside size " +
                       std::to_string(items_.size()));
    return items_[static_cast<std::size_t>(index)];
  }
  const std::vector<Json>& elements() const {
    expect(Type::array);
    return items_;
  }

  // The member named `key` of an object, nullptr when it has none.
  const Json* find(std::string_view key) const {
    expect(Type::object);
    for (std::size_t i = 0; i < keys_.size(); ++i)
      if (keys_[i] == key) return &items_[i];
    return nullptr;
  }
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  const Json& operator[](std::string_view key) const {
    if (const Json* value = find(key)) return *value;
    throw InputError("JSON object has no key \"" + std::string(key) + "\"");
  }
  const Json& operator[](const char* key) const { return (*this)[std::string_view(key)]; }
  // Keys of an object, in document order.
  const std::vector<std::string>& keys() const {
    expect(Type::object);
    return keys_;
  }

  static std::string type_name(Type type) {
    static const char* const names[] = {"null", "boolean", "number", "string", "array", "object"};
    return names[static_cast<int>(type)];
  }

 private:
  friend class JsonParser;

  void expect(Type wanted) const {
    if (type_ != wanted)
      throw InputError("JSON value is a " + type_name(type_) + ", not a " + type_name(wanted));
  }

  Type type_ = Type::null;
  bool boolean_ = false;
  double number_ = 0;
  std::string text_;               // string value, or a number's literal text
  std::vector<std::string> keys_;  // object keys, parallel to items_
  std::vector<Json> items_;        // array elements or object values
};

class JsonParser {
 public:
  explicit JsonParser(std::string_view text, std::size_t max_values = max_input_values(max_input_bytes()))
      : text_(text), values_left_(max_values) {}

  Json parse_document() {
    Json value = parse_value(0);
    skip_whitespace();
    if (at_ < text_.size()) fail("unexpected text after the value");
    return value;
  }

 private:
  static constexpr int max_depth = 256;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError("JSON error at offset " + std::to_string(at_) + ": " + what);
  }
  void skip_whitespace() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  bool consume(char c) {
    if (at_ >= text_.size() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  void require(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }
  bool consume_word(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }

  Json parse_value(int depth) {
    if (depth > max_depth) fail("nesting deeper than " + std::to_string(max_depth));
    if (values_left_ == 0) fail("more JSON values than the input limit allows (input_limits.hpp)");
    --values_left_;
    skip_whitespace();
    Json value;
    const char c = peek();
    if (c == '{') {
      parse_object(value, depth);
    } else if (c == '[') {
      parse_array(value, depth);
    } else if (c == '"') {
      value.type_ = Json::Type::string;
      value.text_ = parse_string();
    } else if (consume_word("true")) {
      value.type_ = Json::Type::boolean;
      value.boolean_ = true;
    } else if (consume_word("false")) {
      value.type_ = Json::Type::boolean;
    } else if (consume_word("null")) {
      value.type_ = Json::Type::null;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      parse_number(value);
    } else {
      fail(at_ < text_.size() ? "unexpected character" : "unexpected end of text");
    }
    return value;
  }

  void parse_object(Json& value, int depth) {
    value.type_ = Json::Type::object;
    require('{');
    skip_whitespace();
    if (consume('}')) return;
    do {
      skip_whitespace();
      if (peek() != '"') fail("expected a string key");
      value.keys_.push_back(parse_string());
      skip_whitespace();
      require(':');
      value.items_.push_back(parse_value(depth + 1));
      skip_whitespace();
    } while (consume(','));
    require('}');
    if (const std::string* twice = duplicate_key(value.keys_))
      fail("duplicate key \"" + *twice + "\" in an object");
  }

  // A key that appears twice, nullptr when none does. Sorted, not pairwise,
  // so an object of a million keys costs n log n.
  static const std::string* duplicate_key(const std::vector<std::string>& keys) {
    std::vector<const std::string*> sorted;
    sorted.reserve(keys.size());
    for (const std::string& key : keys) sorted.push_back(&key);
    std::sort(sorted.begin(), sorted.end(),
              [](const std::string* a, const std::string* b) { return *a < *b; });
    const auto twice = std::adjacent_find(
        sorted.begin(), sorted.end(), [](const std::string* a, const std::string* b) { return *a == *b; });
    return twice == sorted.end() ? nullptr : *twice;
  }

  void parse_array(Json& value, int depth) {
    value.type_ = Json::Type::array;
    require('[');
    skip_whitespace();
    if (consume(']')) return;
    do {
      value.items_.push_back(parse_value(depth + 1));
      skip_whitespace();
    } while (consume(','));
    require(']');
  }

  void parse_number(Json& value) {
    const std::size_t start = at_;
    const auto digits = [&] {
      const std::size_t first = at_;
      while (peek() >= '0' && peek() <= '9') ++at_;
      if (at_ == first) fail("expected a digit");
    };
    consume('-');
    if (!consume('0')) digits();  // no leading zeros
    if (consume('.')) digits();
    if (consume('e') || consume('E')) {
      if (!consume('+')) consume('-');
      digits();
    }
    value.type_ = Json::Type::number;
    value.text_ = std::string(text_.substr(start, at_ - start));
    const auto result =
        std::from_chars(value.text_.data(), value.text_.data() + value.text_.size(), value.number_);
    if (result.ec != std::errc()) fail("number out of range: " + value.text_);
  }

  unsigned parse_hex4() {
    if (at_ + 4 > text_.size()) fail("truncated \\u escape");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[at_++];
      code <<= 4;
      if (c >= '0' && c <= '9') code |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f') code |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') code |= static_cast<unsigned>(c - 'A' + 10);
      else fail("bad hex digit in \\u escape");
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    const auto byte = [&](unsigned b) { out += static_cast<char>(b); };
    if (code < 0x80) {
      byte(code);
    } else if (code < 0x800) {
      byte(0xC0 | (code >> 6));
      byte(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      byte(0xE0 | (code >> 12));
      byte(0x80 | ((code >> 6) & 0x3F));
      byte(0x80 | (code & 0x3F));
    } else {
      byte(0xF0 | (code >> 18));
      byte(0x80 | ((code >> 12) & 0x3F));
      byte(0x80 | ((code >> 6) & 0x3F));
      byte(0x80 | (code & 0x3F));
    }
  }

  std::string parse_string() {
    require('"');
    std::string out;
    while (true) {
      if (at_ >= text_.size()) fail("unterminated string");
      const char c = text_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (at_ >= text_.size()) fail("unterminated escape");
      switch (text_[at_++]) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned code = parse_hex4();
          if (code >= 0xDC00 && code <= 0xDFFF) fail("lone low surrogate");
          if (code >= 0xD800 && code <= 0xDBFF) {
            if (!consume_word("\\u")) fail("high surrogate without its low half");
            const unsigned low = parse_hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate without its low half");
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, code);
          break;
        }
        default: fail("unknown escape");
      }
    }
  }

  std::string_view text_;
  std::size_t values_left_;
  std::size_t at_ = 0;
};

inline Json parse_json(std::string_view text) { return JsonParser(text).parse_document(); }

// Errors name the path; running out of memory on a file within the limits
// is reported as that file being too large, not as an abort.
inline Json parse_json_file(const std::string& path) {
  try {
    const std::size_t max_bytes = max_input_bytes();
    const std::string text = read_text_file(path, max_bytes);  // its errors name the path
    try {
      return JsonParser(text, max_input_values(max_bytes)).parse_document();
    } catch (const Error& error) {
      throw InputError(terminal_safe(path + ": " + error.what()));
    }
  } catch (const std::bad_alloc&) {
    throw InputError(terminal_safe(path) + ": too large to read into memory");
  }
}

}  // namespace detail
GPUPROF_NAMESPACE_END
