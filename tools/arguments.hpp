// tools/arguments.hpp: the little argument parsing the command-line tools share.
#pragma once
#include <gpuprof/error.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace gpuprof_tools {

class Arguments {
 public:
  Arguments(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool more() const { return at_ < argc_; }
  std::string next() { return argv_[at_++]; }
  // The value after option `name`; an error when there is none.
  std::string value_of(const std::string& name) {
    if (!more()) throw gpuprof::Error(name + " needs a value");
    return next();
  }

 private:
  int argc_;
  char** argv_;
  int at_ = 1;
};

// "5%" or "0.05" as 0.05; an error for anything else or a negative value.
inline double parse_fraction(const std::string& text, const std::string& option) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || errno != 0 || !std::isfinite(value) || value < 0)
    throw gpuprof::Error(option + ": not a non-negative number or percentage: \"" + text + "\"");
  return percent ? value / 100 : value;
}

inline std::size_t parse_count(const std::string& text, const std::string& option) {
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno != 0 || value < 1)
    throw gpuprof::Error(option + ": not a positive integer: \"" + text + "\"");
  return static_cast<std::size_t>(value);
}

}  // namespace gpuprof_tools
