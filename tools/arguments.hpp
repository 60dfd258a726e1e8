// tools/arguments.hpp: the little argument parsing the command-line tools share.
#pragma once
#include <gpuprof/error.hpp>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
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

// An argument that looks like an option but reached no option's branch.
inline void reject_option(const std::string& arg) {
  if (!arg.empty() && arg[0] == '-') throw gpuprof::Error("unknown option " + arg);
}

// The frame every tool shares, so they all answer alike: `parse(args, arg)`
// takes each argument in turn (-h/--help aside: the usage, exit 0), `check()`
// judges the whole command line, `run()` does the work and returns the exit
// status. A gpuprof::Error from parsing or checking prints the message and the
// usage, from running the message alone; both exit 2.
template <class Parse, class Check, class Run>
int run_tool(const char* name, const char* usage, int argc, char** argv, Parse parse, Check check, Run run) {
  try {
    Arguments args(argc, argv);
    while (args.more()) {
      const std::string arg = args.next();
      if (arg == "-h" || arg == "--help") {
        std::cout << usage;
        return 0;
      }
      parse(args, arg);
    }
    check();
  } catch (const gpuprof::Error& error) {
    std::cerr << name << ": " << error.what() << "\n" << usage;
    return 2;
  }
  try {
    return run();
  } catch (const gpuprof::Error& error) {
    std::cerr << name << ": " << error.what() << "\n";
    return 2;
  }
}

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
