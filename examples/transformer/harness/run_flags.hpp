// harness/run_flags.hpp: the flags transformer_bench and transformer_profile
// share (what to run and how often), parsed by one parser so both programs
// accept and reject exactly the same values. Parsing never touches a device.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/backend.hpp"
#include "model/config.hpp"

namespace transformer::harness {

// Bad command-line input. The programs print what() and exit with status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DeviceChoice { automatic, cuda, cpu };

// Empty lists mean "the program's default".
struct RunFlags {
  std::vector<std::string> sizes;  // names from size_names(), or "custom"
  std::vector<int> contexts;
  std::vector<Mode> modes;
  std::vector<Precision> precisions;
  std::vector<Attention> attentions;  // empty: default_attention() of each configuration
  int batch = 4;
  int warmup = 5;
  int steps = 10;
  DeviceChoice device = DeviceChoice::automatic;
  ModelConfig custom;      // the dimensions of --size custom
  std::uint64_t seed = 0;  // parameters and token ids
};

// "--flag value" and "--flag=value" parsing: the shared flags are registered
// into `flags`; a program adds its own before parse(). Every error is a
// UsageError naming the flag and the value at fault; a flag given twice is one.
class FlagParser {
 public:
  explicit FlagParser(RunFlags& flags);
  // The handlers point into the parsed objects.
  FlagParser(const FlagParser&) = delete;
  FlagParser& operator=(const FlagParser&) = delete;

  void add_value(const char* flag, std::function<void(const std::string&)> handler);
  void add_switch(const char* flag, std::function<void()> handler);
  void add_integer(const char* flag, int& field, int minimum);
  // A file: "-" is standard output. A directory: "-" is refused.
  void add_path(const char* flag, std::string& field);
  void add_directory(const char* flag, std::string& field);

  void parse(const std::vector<std::string>& args);

 private:
  void check_custom_size() const;

  RunFlags& flags_;
  std::map<std::string, std::function<void(const std::string&)>> with_value_;
  std::map<std::string, std::function<void()>> switches_;
  std::vector<std::string> custom_flags_given_;
};

// The shared flags alone (what transformer_profile hands over).
RunFlags parse_run_flags(const std::vector<std::string>& args);

// The attentions to run for this model, precision and context: --attention's
// list, or the default one. A fused entry stays even where it cannot run (fp32, an
// unbuilt head size): unsupported_attention() says why for the row.
std::vector<Attention> attentions_for(const std::vector<Attention>& chosen, Precision precision,
                                      const ModelConfig& model, int ctx);
// Why `config`'s attention cannot run, or "" when it can.
std::string unsupported_attention(const RunConfig& config);

// "tiny, small, ..., custom": the --size values, for usage texts.
std::string joined_size_names();

}  // namespace transformer::harness
