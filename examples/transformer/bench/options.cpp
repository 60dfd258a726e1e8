// bench/options.cpp: parses transformer_bench's flags (see usage_text()).
#include "options.hpp"

#include <algorithm>
#include <charconv>
#include <functional>
#include <map>
#include <sstream>

namespace transformer::bench {
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

std::vector<std::string> split_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    if (item.empty()) fail(flag, text, "empty item in the comma-separated list");
    items.push_back(item);
  }
  if (items.empty()) fail(flag, text, "empty list");
  return items;
}

template <typename T, typename Parse>
std::vector<T> parse_list(const std::string& flag, const std::string& text, Parse parse_item) {
  std::vector<T> values;
  for (const std::string& item : split_list(flag, text)) values.push_back(parse_item(item));
  return values;
}

std::string joined_size_names() {
  std::string names;
  for (const std::string& name : size_names()) names += name + ", ";
  return names + "custom";
}

bool is_custom_dimension_flag(const std::string& flag) {
  return flag == "--d-model" || flag == "--d-ff" || flag == "--layers" || flag == "--heads" ||
         flag == "--vocab";
}

class Parser {
 public:
  Parser() {
    using Setter = std::function<void(const std::string&)>;
    const auto flag = [this](const std::string& name, Setter set) { with_value_[name] = set; };
    flag("--size", [this](const std::string& v) {
      options_.sizes = split_list("--size", v);
      for (const std::string& size : options_.sizes)
        if (size != "custom" && !named_size(size))
          fail("--size", size, "unknown size (known: " + joined_size_names() + ")");
    });
    flag("--ctx", [this](const std::string& v) {
      options_.contexts = parse_list<int>("--ctx", v, [](const std::string& item) {
        return parse_at_least("--ctx", item, 1);
      });
    });
    flag("--mode", [this](const std::string& v) {
      options_.modes = parse_list<Mode>("--mode", v, [](const std::string& item) {
        const auto mode = parse_mode(item);
        if (!mode) fail("--mode", item, "unknown mode (known: fwd, fwdbwd, step)");
        return *mode;
      });
    });
    flag("--precision", [this](const std::string& v) {
      options_.precisions = parse_list<Precision>("--precision", v, [](const std::string& item) {
        const auto precision = parse_precision(item);
        if (!precision) fail("--precision", item, "unknown precision (known: fp32, tf32, bf16)");
        return *precision;
      });
    });
    flag("--batch", [this](const std::string& v) { options_.batch = parse_at_least("--batch", v, 1); });
    flag("--warmup", [this](const std::string& v) { options_.warmup = parse_at_least("--warmup", v, 0); });
    flag("--steps", [this](const std::string& v) {
      options_.steps = parse_at_least("--steps", v, 1);
      options_.steps_given = true;
    });
    flag("--device", [this](const std::string& v) {
      static const std::map<std::string, DeviceChoice> choices = {
          {"auto", DeviceChoice::automatic}, {"cuda", DeviceChoice::cuda}, {"cpu", DeviceChoice::cpu}};
      const auto found = choices.find(v);
      if (found == choices.end()) fail("--device", v, "unknown device (known: auto, cuda, cpu)");
      options_.device = found->second;
    });
    flag("--d-model", [this](const std::string& v) { options_.custom.d_model = parse_at_least("--d-model", v, 1); });
    flag("--d-ff", [this](const std::string& v) { options_.custom.d_ff = parse_at_least("--d-ff", v, 1); });
    flag("--layers", [this](const std::string& v) { options_.custom.layers = parse_at_least("--layers", v, 1); });
    flag("--heads", [this](const std::string& v) { options_.custom.heads = parse_at_least("--heads", v, 1); });
    flag("--vocab", [this](const std::string& v) { options_.custom.vocab = parse_at_least("--vocab", v, 1); });
    flag("--seed", [this](const std::string& v) { options_.seed = parse_number<std::uint64_t>("--seed", v); });
    flag("--json", [this](const std::string& v) { options_.json_path = non_empty("--json", v); });
    flag("--csv", [this](const std::string& v) { options_.csv_path = non_empty("--csv", v); });
    flag("--dump", [this](const std::string& v) { options_.dump_dir = non_empty("--dump", v); });
    flag("--torch-jsonl", [this](const std::string& v) { options_.torch_jsonl_path = non_empty("--torch-jsonl", v); });
    flag("--report-json", [this](const std::string& v) { options_.report_json_path = non_empty("--report-json", v); });
    flag("--trace", [this](const std::string& v) { options_.trace_path = non_empty("--trace", v); });
    flag("--loss-curve", [this](const std::string& v) {
      options_.loss_curve_steps = parse_at_least("--loss-curve", v, 1);
    });
    switches_["--help"] = [this] { options_.help = true; };
    switches_["-h"] = [this] { options_.help = true; };
    switches_["--report"] = [this] { options_.print_report = true; };
    switches_["--warmup-study"] = [this] { options_.warmup_study = true; };
  }

  DriverOptions parse(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::string name = args[i];
      std::string value;
      bool value_inline = false;
      if (const auto equals = name.find('='); name.rfind("--", 0) == 0 && equals != std::string::npos) {
        value = name.substr(equals + 1);
        name = name.substr(0, equals);
        value_inline = true;
      }
      if (const auto found = switches_.find(name); found != switches_.end()) {
        if (value_inline) fail(name, value, "this flag takes no value");
        found->second();
        continue;
      }
      const auto found = with_value_.find(name);
      if (found == with_value_.end()) throw UsageError("unknown flag '" + name + "' (see --help)");
      if (!value_inline) {
        if (i + 1 == args.size()) throw UsageError(name + ": missing value");
        value = args[++i];
      }
      if (is_custom_dimension_flag(name)) custom_flags_given_.push_back(name);
      found->second(value);
    }
    check_custom_size();
    return options_;
  }

 private:
  static std::string non_empty(const std::string& flag, const std::string& value) {
    if (value.empty()) fail(flag, value, "empty path");
    return value;
  }

  // The dimension flags only make sense for --size custom, and custom needs
  // them all (a silently defaulted dimension would benchmark a model nobody asked for).
  void check_custom_size() {
    const bool custom_requested =
        std::find(options_.sizes.begin(), options_.sizes.end(), "custom") != options_.sizes.end();
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
      options_.custom.validate();
    } catch (const std::invalid_argument& error) {
      throw UsageError(std::string("--size custom: ") + error.what());
    }
  }

  DriverOptions options_;
  std::map<std::string, std::function<void(const std::string&)>> with_value_;
  std::map<std::string, std::function<void()>> switches_;
  std::vector<std::string> custom_flags_given_;
};

}  // namespace

DriverOptions parse_options(const std::vector<std::string>& args) { return Parser().parse(args); }

DriverOptions parse_options(int argc, char** argv) {
  return parse_options(std::vector<std::string>(argv + 1, argv + argc));
}

void resolve_defaults(DriverOptions& options, bool on_gpu) {
  if (options.sizes.empty()) options.sizes = {on_gpu ? "small" : "tiny"};
  if (options.contexts.empty())
    options.contexts = on_gpu ? std::vector<int>{128, 256, 512, 1024} : std::vector<int>{128};
  if (options.modes.empty()) options.modes = {Mode::fwd, Mode::fwdbwd, Mode::step};
  if (options.precisions.empty())
    options.precisions = on_gpu ? std::vector<Precision>{Precision::fp32, Precision::bf16}
                                : std::vector<Precision>{Precision::fp32};
}

ModelConfig model_for_size(const DriverOptions& options, const std::string& size) {
  if (size == "custom") {
    ModelConfig custom = options.custom;
    custom.name = "custom";
    return custom;
  }
  const auto model = named_size(size);
  if (!model) throw UsageError("--size '" + size + "': unknown size");
  return *model;
}

std::string usage_text() {
  return "usage: transformer_bench [flags]\n"
         "Times the CS336 Transformer LM: w warm-up steps, then n timed steps (CUDA events,\n"
         "synchronized after every step), over sizes x contexts x modes x precisions.\n"
         "Lists are comma-separated.\n"
         "\n"
         "  --size LIST        " + joined_size_names() + "\n"
         "                     (custom: with --d-model N --d-ff N --layers N --heads N [--vocab N])\n"
         "  --ctx LIST         context lengths (GPU default 128,256,512,1024; CPU 128)\n"
         "  --batch N          sequences per step (default 4)\n"
         "  --warmup N         warm-up steps (default 5)\n"
         "  --steps N          timed steps (default 10)\n"
         "  --mode LIST        fwd, fwdbwd, step (default all three)\n"
         "  --precision LIST   fp32, tf32, bf16 (GPU default fp32,bf16; the CPU runs fp32 only)\n"
         "  --device D         auto (default: CUDA when usable, else CPU), cuda, cpu\n"
         "  --seed N           parameters and token ids (default 0)\n"
         "  --json PATH        write every row as JSON (schema gpuprof.transformer_bench)\n"
         "  --csv PATH         the same rows as CSV\n"
         "  --torch-jsonl PATH join rows of bench/torch_ref.py (speedup = torch median / ours)\n"
         "  --dump DIR         after one train step of the first configuration, write tokens,\n"
         "                     parameters, loss, logits, gradients as .npy (docs/transformer-dump.md)\n"
         "  --warmup-study     mean/std of the timed steps after 0, 1, 2, 5 warm-ups\n"
         "  --loss-curve N     loss of N train steps per precision, from one initialisation\n"
         "  --report           print gpuprof's scope tree at the end\n"
         "  --report-json PATH write gpuprof's report as JSON\n"
         "  --trace PATH       write gpuprof's Chrome trace\n"
         "  --help             this text\n"
         "\n"
         "Exit status: 0 done, 1 a run failed, 2 bad input.\n";
}

}  // namespace transformer::bench
