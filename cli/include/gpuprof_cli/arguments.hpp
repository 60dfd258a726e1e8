// gpuprof_cli/arguments.hpp: the frame of a gpuprof command line: arguments
// taken one at a time, options given at most once, the whole line checked
// before any work, and exit statuses every tool shares (run_tool, below).
//
// ```cpp
// #include <gpuprof_cli/arguments.hpp>
// #include <iostream>
// int main(int argc, char** argv) {
//   std::size_t rounds = 5;
//   return gpuprof::run_tool(
//       "myprog", "usage: myprog [--rounds N]\n", argc, argv,
//       [&](gpuprof::Arguments& args, const std::string& arg) {
//         if (arg == "--rounds") rounds = gpuprof::parse_count(args.value_of(arg), arg);
//         else gpuprof::reject_option(arg);
//       },
//       [] {}, [&] { std::cout << rounds << " rounds\n"; return 0; });
// }
// ```
#pragma once
#include <gpuprof/config.hpp>
#include <gpuprof/error.hpp>
#include <gpuprof/terminal_text.hpp>
#include <gpuprof_cli/standard_output.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <new>
#include <set>
#include <stdexcept>
#include <string>

GPUPROF_NAMESPACE_BEGIN

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
  // The path after option `name`: never empty ("" names no file).
  std::string path_of(const std::string& name) {
    std::string path = value_of(name);
    if (path.empty()) throw gpuprof::Error(name + " '': an empty path names no file");
    return path;
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

// An argument that reached no option's branch, in a program that takes no
// operands: an option is unknown, anything else is unexpected; neither is
// ignored.
[[noreturn]] inline void reject_argument(const std::string& arg) {
  reject_option(arg);
  throw gpuprof::Error("unexpected argument '" + arg + "'");
}

// The frame every tool shares, so they all answer alike: `parse(args, arg)`
// takes each argument in turn (-h/--help aside: the usage, exit 0), `check()`
// judges the whole command line (outputs included, before any work), `run()`
// does the work and returns the exit status. An option given twice is an
// error, never "the last one wins". A gpuprof::Error from parsing or checking
// prints the message and the usage, from running the message alone; both
// exit 2. Any other exception (out of memory among them) is exit 1 with its
// message, as is standard output that could not be written (full, closed).
// Messages may quote the command line or a file: they are printed as
// terminal_safe() writes them.
template <class Parse, class Check, class Run>
int run_tool(const char* name, const char* usage, int argc, char** argv, Parse parse, Check check, Run run) {
  gpuprof::guard_standard_streams();
  try {
    Arguments args(argc, argv);
    std::set<std::string> options_seen;
    while (args.more()) {
      const std::string arg = args.next();
      if (arg == "-h" || arg == "--help") {
        std::cout << usage;
        return gpuprof::finish_standard_output(name, 0);
      }
      if (arg.size() > 1 && arg[0] == '-' && !options_seen.insert(arg).second)
        throw gpuprof::Error(arg + " given twice");
      parse(args, arg);
    }
    check();
  } catch (const gpuprof::Error& error) {
    std::cerr << name << ": " << gpuprof::terminal_safe(error.what()) << "\n" << usage;
    return 2;
  } catch (const std::exception& error) {  // out of memory among them: never an abort
    std::cerr << name << ": " << gpuprof::terminal_safe(error.what()) << "\n";
    return 1;
  }
  try {
    return gpuprof::finish_standard_output(name, run());
  } catch (const gpuprof::Error& error) {  // bad input (gpuprof::InputError) among them
    std::cerr << name << ": " << gpuprof::terminal_safe(error.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << name << ": out of memory\n";
    return 1;
  } catch (const std::exception& error) {  // a failure of ours, never an abort
    std::cerr << name << ": " << gpuprof::terminal_safe(error.what()) << "\n";
    return 1;
  }
}

// run() for run_tool in a program that reads no input: its work failing (a
// CUDA call, an output that passed check() but could not be written) is the
// README's "a run failed", exit 1, where run_tool answers a gpuprof::Error
// from run() with 2, meant for bad input.
template <class Run>
auto run_reading_no_input(Run run) {
  return [run]() mutable -> int {
    try {
      return run();
    } catch (const gpuprof::Error& error) {
      throw std::runtime_error(error.what());
    }
  };
}

// A fraction written as a ratio ("0.05") or a percentage ("5%"), both in
// [0, 1] (0 % to 100 %). Only plain decimals: no sign, exponent, hex, inf or
// nan, so "5" (500 %, surely meant as 5 %) is refused with a hint instead of
// being read as a ratio.
inline double parse_fraction(const std::string& text, const std::string& option) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  const auto refuse = [&](const std::string& why) -> double {
    throw gpuprof::Error(option + " '" + text + "': " + why);
  };
  const bool plain_decimal = number.find_first_not_of("0123456789.") == std::string::npos &&
                             std::count(number.begin(), number.end(), '.') <= 1 &&
                             number.find_first_of("0123456789") != std::string::npos;
  if (!plain_decimal) refuse("not a ratio (0.05) or a percentage (5%)");
  const double value = std::strtod(number.c_str(), nullptr);  // huge digit strings give inf: refused below
  if (percent && value > 100) refuse("above 100%");
  if (!percent && value > 1) refuse("a ratio above 1 (over 100%); write " + number + "% for a percentage");
  return percent ? value / 100 : value;
}

// A count written as plain digits: no sign, space, exponent or hex, which
// strtoll alone would take (" 5", "+5").
inline std::size_t parse_count(const std::string& text, const std::string& option) {
  errno = 0;
  const unsigned long long value = std::strtoull(text.c_str(), nullptr, 10);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || errno != 0 || value < 1)
    throw gpuprof::Error(option + ": not a positive integer: \"" + text + "\"");
  return static_cast<std::size_t>(value);
}

GPUPROF_NAMESPACE_END
