// bench/torch_reference.cpp: the flat JSON-lines reader and the join.
#include "bench/torch_reference.hpp"

#include <gpuprof/input_limits.hpp>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

namespace transformer::bench {
namespace {

class FlatObjectReader {
 public:
  explicit FlatObjectReader(const std::string& text) : text_(text) {}

  FlatJsonObject read() {
    FlatJsonObject object;
    expect('{');
    if (peek() == '}') {
      ++at_;
    } else {
      for (;;) {
        std::string key = read_string();
        expect(':');
        object[key] = read_value();
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}');
        break;
      }
    }
    if (peek() != '\0') fail("trailing characters after the object");
    return object;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(why + " at column " + std::to_string(at_ + 1));
  }

  char peek() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
    return at_ < text_.size() ? text_[at_] : '\0';
  }

  void expect(char wanted) {
    if (peek() != wanted) fail(std::string("expected '") + wanted + "'");
    ++at_;
  }

  bool consume_word(const char* word) {
    const std::string w(word);
    if (text_.compare(at_, w.size(), w) != 0) return false;
    at_ += w.size();
    return true;
  }

  FlatJsonValue read_value() {
    const char next = peek();
    if (next == '"') return read_string();
    if (consume_word("true")) return true;
    if (consume_word("false")) return false;
    if (consume_word("null")) return nullptr;
    if (next == '{' || next == '[') fail("nested values are not expected in a torch_reference.py line");
    // Python's json also writes NaN and Infinity; strtod reads both spellings.
    const char* begin = text_.c_str() + at_;
    char* end = nullptr;
    const double number = std::strtod(begin, &end);
    if (end == begin) fail("expected a value");
    at_ += static_cast<std::size_t>(end - begin);
    return number;
  }

  std::string read_string() {
    expect('"');
    std::string value;
    while (at_ < text_.size() && text_[at_] != '"') {
      char c = text_[at_++];
      if (c == '\\') {
        if (at_ >= text_.size()) break;
        const char escaped = text_[at_++];
        switch (escaped) {
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          case 'r': c = '\r'; break;
          case 'b': c = '\b'; break;
          case 'f': c = '\f'; break;
          case 'u':
            // Only names and numbers matter here; a non-ASCII code point in a
            // string is kept as '?' rather than decoded.
            // The range test comes before any narrowing to char: cast first,
            // \u0141 would turn into 'A' and \u0100 into a NUL.
            c = code_point_below_0x80_or_question_mark();
            break;
          default: c = escaped;  // \" \\ \/
        }
      }
      value += c;
    }
    expect('"');
    return value;
  }

  // The 4 hex digits after "\u". Each is checked first: strtol alone would
  // also take a sign, leading blanks or fewer digits.
  char code_point_below_0x80_or_question_mark() {
    if (at_ + 4 > text_.size()) fail("short \\u escape");
    const std::string hex = text_.substr(at_, 4);
    for (const char digit : hex)
      if (!std::isxdigit(static_cast<unsigned char>(digit)))
        fail("\\u escape needs 4 hex digits, got \"" + hex + "\"");
    at_ += 4;
    const long code_point = std::strtol(hex.c_str(), nullptr, 16);
    return code_point < 0x80 ? static_cast<char>(code_point) : '?';
  }

  const std::string& text_;
  std::size_t at_ = 0;
};

// Rows without a batch (the yardstick's older rows) stand for batch 4, its default.
constexpr int torch_default_batch = 4;

template <typename T>
const T* field(const FlatJsonObject& object, const std::string& name) {
  const auto found = object.find(name);
  return found == object.end() ? nullptr : std::get_if<T>(&found->second);
}

std::optional<double> optional_number(const FlatJsonObject& object, const std::string& name) {
  if (const double* value = field<double>(object, name)) return *value;
  return std::nullopt;
}

}  // namespace

FlatJsonObject parse_flat_json_object(const std::string& line) { return FlatObjectReader(line).read(); }

// Read like every file gpuprof's tools take: bounded by GPUPROF_MAX_INPUT_MB,
// so /dev/zero or a directory is an error, and a file with no row is one too
// (a run that joins nothing would look like a run without --torch-jsonl).
TorchReference TorchReference::read(const std::string& path) {
  const std::string text = gpuprof::read_text_file(path);
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  TorchReference reference = from_lines(lines, path);
  if (reference.figures_.empty()) throw std::runtime_error(path + ": no torch_reference.py rows");
  return reference;
}

TorchReference TorchReference::from_lines(const std::vector<std::string>& lines, const std::string& origin) {
  TorchReference reference;
  for (std::size_t number = 1; number <= lines.size(); ++number) {
    const std::string& line = lines[number - 1];
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = origin + ":" + std::to_string(number) + ": ";
    FlatJsonObject object;
    try {
      object = parse_flat_json_object(line);
    } catch (const std::runtime_error& error) {
      throw std::runtime_error(where + error.what());
    }
    const auto* size = field<std::string>(object, "size");
    const auto* ctx = field<double>(object, "ctx");
    const auto* mode = field<std::string>(object, "mode");
    const auto* precision = field<std::string>(object, "prec");
    if (!size || !ctx || !mode || !precision)
      throw std::runtime_error(where + "a torch_reference.py row needs size, ctx, mode and prec");

    harness::TorchFigures figures;
    const bool* oom = field<bool>(object, "oom");
    figures.oom = oom && *oom;
    const bool* compiled = field<bool>(object, "compile");
    figures.compiled = compiled && *compiled;
    figures.median_ms = optional_number(object, "median_ms");
    figures.mean_ms = optional_number(object, "mean_ms");
    if (const auto gib = optional_number(object, "peak_mem_gib"))
      figures.peak_mem_bytes = std::round(*gib * 1073741824.0);
    const double* batch = field<double>(object, "batch");
    const int batch_size = batch ? static_cast<int>(*batch) : torch_default_batch;
    reference.figures_[Key{*size, static_cast<int>(*ctx), *mode, *precision, batch_size}] = figures;
  }
  return reference;
}

void TorchReference::join(harness::ResultRow& row) const {
  const auto found =
      figures_.find(Key{row.size, row.ctx, to_string(row.mode), to_string(row.precision), row.batch});
  if (found != figures_.end()) row.torch = found->second;
}

}  // namespace transformer::bench
