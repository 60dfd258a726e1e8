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
    // Each handler parses the value of its flag into a field of options_.
    const auto integer = [this](const char* flag, int& field, int minimum) {
      with_value_[flag] = [flag, &field, minimum](const std::string& value) {
        field = parse_at_least(flag, value, minimum);
      };
    };
    const auto path = [this](const char* flag, std::string& field) {
      with_value_[flag] = [flag, &field](const std::string& value) {
        if (value.empty()) fail(flag, value, "empty path");
        field = value;
      };
    };
    const auto list = [this](const char* flag, auto& field, auto parse_item) {
      with_value_[flag] = [flag, &field, parse_item](const std::string& value) {
        field.clear();
        for (const std::string& item : split_list(flag, value)) field.push_back(parse_item(item));
      };
    };

    list("--size", options_.sizes, [](const std::string& size) {
      if (size != "custom" && !named_size(size))
        fail("--size", size, "unknown size (known: " + joined_size_names() + ")");
      return size;
    });
    list("--ctx", options_.contexts,
         [](const std::string& item) { return parse_at_least("--ctx", item, 1); });
    list("--mode", options_.modes, [](const std::string& item) {
      const auto mode = parse_mode(item);
      if (!mode) fail("--mode", item, "unknown mode (known: fwd, fwdbwd, step)");
      return *mode;
    });
    list("--precision", options_.precisions, [](const std::string& item) {
      const auto precision = parse_precision(item);
      if (!precision) fail("--precision", item, "unknown precision (known: fp32, tf32, bf16)");
      return *precision;
    });
    integer("--batch", options_.batch, 1);
    integer("--warmup", options_.warmup, 0);
    integer("--steps", options_.steps, 1);
    integer("--loss-curve", options_.loss_curve_steps, 1);
    integer("--d-model", options_.custom.d_model, 1);
    integer("--d-ff", options_.custom.d_ff, 1);
    integer("--layers", options_.custom.layers, 1);
    integer("--heads", options_.custom.heads, 1);
    integer("--vocab", options_.custom.vocab, 1);
    with_value_["--seed"] = [this](const std::string& value) {
      options_.seed = parse_number<std::uint64_t>("--seed", value);
    };
    with_value_["--device"] = [this](const std::string& value) {
      static const std::map<std::string, DeviceChoice> choices = {{"auto", DeviceChoice::automatic},
                                                                  {"cuda", DeviceChoice::cuda},
                                                                  {"cpu", DeviceChoice::cpu}};
      const auto found = choices.find(value);
      if (found == choices.end())
        fail("--device", value, "unknown device (known: auto, cuda, cpu)");
      options_.device = found->second;
    };
    path("--json", options_.json_path);
    path("--csv", options_.csv_path);
    path("--dump", options_.dump_dir);
    path("--torch-jsonl", options_.torch_jsonl_path);
    path("--report-json", options_.report_json_path);
    path("--trace", options_.trace_path);
    switches_["--help"] = [this] { options_.help = true; };
    switches_["-h"] = [this] { options_.help = true; };
    switches_["--report"] = [this] { options_.print_report = true; };
    switches_["--warmup-study"] = [this] { options_.warmup_study = true; };
    switches_["--graph"] = [this] { set_graph("--graph", true); };
    switches_["--eager"] = [this] { set_graph("--eager", false); };
  }

  // The handlers point into this object.
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  DriverOptions parse(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      std::string name = args[i];
      std::string value;
      bool value_inline = false;
      if (const auto equals = name.find('=');
          name.rfind("--", 0) == 0 && equals != std::string::npos) {
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
      if (found == with_value_.end()) throw UsageError("unknown flag '" + name + "'");
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
  void set_graph(const char* flag, bool graph) {
    if (options_.graph && *options_.graph != graph)
      throw UsageError(std::string(flag) + ": --graph and --eager exclude each other");
    options_.graph = graph;
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
  if (!options.graph) options.graph = on_gpu;
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
         "  --size LIST        " +
         joined_size_names() +
         "\n"
         "                     (custom: with --d-model N --d-ff N --layers N --heads N [--vocab "
         "N])\n"
         "  --ctx LIST         context lengths (GPU default 128,256,512,1024; CPU 128)\n"
         "  --batch N          sequences per step (default 4)\n"
         "  --warmup N         warm-up steps (default 5)\n"
         "  --steps N          timed steps (default 10)\n"
         "  --graph            capture each configuration's step (after the warm-up) as one\n"
         "                     CUDA graph and time its replays (the default on the GPU)\n"
         "  --eager            launch every kernel of every step from the host (the CPU's way)\n"
         "  --mode LIST        fwd, fwdbwd, step (default all three)\n"
         "  --precision LIST   fp32, tf32, bf16 (GPU default fp32,bf16; the CPU runs fp32 only)\n"
         "  --device D         auto (default: CUDA when usable, else CPU), cuda, cpu\n"
         "  --seed N           parameters and token ids (default 0)\n"
         "  --json PATH        write every row as JSON (schema gpuprof.transformer_bench)\n"
         "  --csv PATH         the same rows as CSV\n"
         "  --torch-jsonl PATH join rows of bench/torch_ref.py (speedup = torch median / ours)\n"
         "  --dump DIR         after one train step of the first configuration, write tokens,\n"
         "                     parameters, loss, logits, gradients as .npy "
         "(docs/transformer-dump.md)\n"
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
