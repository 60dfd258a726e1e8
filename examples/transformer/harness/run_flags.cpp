// harness/run_flags.cpp: the shared flag parser.
#include "harness/run_flags.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <set>

namespace transformer::harness {
namespace {

[[noreturn]] void fail(const std::string& flag, const std::string& value, const std::string& why) {
  throw UsageError(flag + " " + (value.empty() ? "''" : "'" + value + "'") + ": " + why);
}

template <typename Integer>
Integer parse_number(const std::string& flag, const std::string& text) {
  Integer value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error == std::errc::invalid_argument || stop != end)
    fail(flag, text, "not a whole number");
  if (error == std::errc::result_out_of_range) fail(flag, text, "out of range");
  return value;
}

int parse_at_least(const std::string& flag, const std::string& text, int minimum) {
  const int value = parse_number<int>(flag, text);
  if (value < minimum) fail(flag, text, "must be at least " + std::to_string(minimum));
  return value;
}

// Every item between commas, the first and last included: "128," and ",128"
// hold an empty item and are refused alike.
std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
  if (text.empty()) fail(flag, text, "empty list");
  std::vector<std::string> items;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (items.back().empty()) fail(flag, text, "empty item in the comma-separated list");
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

bool is_custom_dimension_flag(const std::string& flag) {
  return flag == "--d-model" || flag == "--d-ff" || flag == "--layers" || flag == "--heads" ||
         flag == "--vocab";
}

}  // namespace

std::string joined_size_names() {
  std::string names;
  for (const std::string& name : size_names()) names += name + ", ";
  return names + "custom";
}

void FlagParser::add_value(const char* flag, std::function<void(const std::string&)> handler) {
  with_value_[flag] = std::move(handler);
}

void FlagParser::add_switch(const char* flag, std::function<void()> handler) {
  switches_[flag] = std::move(handler);
}

void FlagParser::add_integer(const char* flag, int& field, int minimum) {
  add_value(flag, [flag, &field, minimum](const std::string& value) {
    field = parse_at_least(flag, value, minimum);
  });
}

void FlagParser::add_path(const char* flag, std::string& field) {
  add_value(flag, [flag, &field](const std::string& value) {
    if (value.empty()) fail(flag, value, "empty path");
    field = value;
  });
}

void FlagParser::add_directory(const char* flag, std::string& field) {
  add_value(flag, [flag, &field](const std::string& value) {
    if (value.empty()) fail(flag, value, "empty path");
    if (value == "-") fail(flag, value, "a directory cannot be standard output");
    field = value;
  });
}

FlagParser::FlagParser(RunFlags& flags) : flags_(flags) {
  const auto list = [this](const char* flag, auto& field, auto parse_item) {
    add_value(flag, [flag, &field, parse_item](const std::string& value) {
      field.clear();
      for (const std::string& item : split_list(flag, value)) field.push_back(parse_item(item));
    });
  };

  list("--size", flags_.sizes, [](const std::string& size) {
    if (size != "custom" && !named_size(size))
      fail("--size", size, "unknown size (known: " + joined_size_names() + ")");
    return size;
  });
  list("--ctx", flags_.contexts, [](const std::string& item) { return parse_at_least("--ctx", item, 1); });
  list("--mode", flags_.modes, [](const std::string& item) {
    const auto mode = parse_mode(item);
    if (!mode) fail("--mode", item, "unknown mode (known: fwd, fwdbwd, step)");
    return *mode;
  });
  list("--precision", flags_.precisions, [](const std::string& item) {
    const auto precision = parse_precision(item);
    if (!precision) fail("--precision", item, "unknown precision (known: fp32, tf32, bf16)");
    return *precision;
  });
  list("--attention", flags_.attentions, [](const std::string& item) {
    const auto attention = parse_attention(item);
    if (!attention) fail("--attention", item, "unknown attention (known: naive, fused, cudnn)");
    return *attention;
  });
  add_integer("--batch", flags_.batch, 1);
  add_integer("--warmup", flags_.warmup, 0);
  add_integer("--steps", flags_.steps, 1);
  add_integer("--d-model", flags_.custom.d_model, 1);
  add_integer("--d-ff", flags_.custom.d_ff, 1);
  add_integer("--layers", flags_.custom.layers, 1);
  add_integer("--heads", flags_.custom.heads, 1);
  add_integer("--vocab", flags_.custom.vocab, 1);
  add_value("--seed",
            [this](const std::string& value) { flags_.seed = parse_number<std::uint64_t>("--seed", value); });
  add_value("--device", [this](const std::string& value) {
    static const std::map<std::string, DeviceChoice> choices = {
        {"auto", DeviceChoice::automatic}, {"cuda", DeviceChoice::cuda}, {"cpu", DeviceChoice::cpu}};
    const auto found = choices.find(value);
    if (found == choices.end()) fail("--device", value, "unknown device (known: auto, cuda, cpu)");
    flags_.device = found->second;
  });
}

void FlagParser::parse(const std::vector<std::string>& args) {
  std::set<std::string> given;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i];
    std::string value;
    bool value_inline = false;
    if (const auto equals = name.find('='); name.rfind("--", 0) == 0 && equals != std::string::npos) {
      value = name.substr(equals + 1);
      name = name.substr(0, equals);
      value_inline = true;
    }
    // A flag given twice is a mistake (an edited command line, a script that
    // appends): the value that would win is not obvious, so none does.
    if ((switches_.count(name) || with_value_.count(name)) && !given.insert(name).second)
      throw UsageError(name + " given twice");
    if (const auto found = switches_.find(name); found != switches_.end()) {
      if (value_inline) fail(name, value, "this flag takes no value");
      found->second();
      continue;
    }
    const auto found = with_value_.find(name);
    if (found == with_value_.end()) throw UsageError("unknown flag '" + name + "'");
    if (!value_inline) {
      if (i + 1 == args.size()) throw UsageError(name + ": missing value");
      value = args[++i];
    }
    if (is_custom_dimension_flag(name)) custom_flags_given_.push_back(name);
    found->second(value);
  }
  check_custom_size();
}

// The dimension flags only make sense for --size custom, and custom needs
// them all (a silently defaulted dimension would benchmark a model nobody asked for).
void FlagParser::check_custom_size() const {
  const bool custom_requested =
      std::find(flags_.sizes.begin(), flags_.sizes.end(), "custom") != flags_.sizes.end();
  if (!custom_requested) {
    if (!custom_flags_given_.empty())
      throw UsageError(custom_flags_given_.front() + " only applies to --size custom");
    return;
  }
  for (const char* required : {"--d-model", "--d-ff", "--layers", "--heads"})
    if (std::find(custom_flags_given_.begin(), custom_flags_given_.end(), required) ==
        custom_flags_given_.end())
      throw UsageError(std::string("--size custom needs ") + required);
  try {
    flags_.custom.validate();
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("--size custom: ") + error.what());
  }
}

RunFlags parse_run_flags(const std::vector<std::string>& args) {
  RunFlags flags;
  FlagParser(flags).parse(args);
  return flags;
}

std::vector<Attention> attentions_for(const std::vector<Attention>& chosen, Precision precision,
                                      const ModelConfig& model, int ctx) {
  if (!chosen.empty()) return chosen;
  return {default_attention(precision, model, ctx, cudnn_attention_available())};
}

std::string unsupported_attention(const RunConfig& config) {
  if (!is_fused(config.attention)) return "";
  if (config.precision != Precision::bf16)
    return std::string(to_string(config.attention)) + " attention is bf16 only (got " +
           to_string(config.precision) + ")";
  if (config.attention == Attention::cudnn) {
    if (!cudnn_attention_available()) return "this build has no cuDNN (CMake found none)";
    if (!cudnn_attention_supports(config.model))
      return "cuDNN attention needs d_head a multiple of 8 up to 128 (got " +
             std::to_string(config.model.d_head()) + ")";
    return "";
  }
  if (!fused_attention_supports(config.model))
    return "fused attention has no kernel for d_head " + std::to_string(config.model.d_head()) +
           " (64, 80, 96, 128)";
  return "";
}

}  // namespace transformer::harness
