// profile/profile_options.cpp: transformer_profile's own flags; the shared ones are
// handed to transformer_bench's parser unchanged.
#include "profile/profile_options.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "bench/driver_options.hpp"
#include "harness/run_flags.hpp"

namespace transformer::profile {
namespace {

using harness::UsageError;

// transformer_bench flags that mean the same here; each takes a value.
constexpr std::array<std::string_view, 14> shared_flags = {
    "--size", "--ctx",     "--precision", "--attention", "--batch", "--warmup", "--steps",
    "--seed", "--d-model", "--d-ff",      "--layers",    "--heads", "--vocab",  "--mode"};

bool is_shared(const std::string& name) {
  return std::find(shared_flags.begin(), shared_flags.end(), name) != shared_flags.end();
}

}  // namespace

ProfileOptions parse_profile_options(const std::vector<std::string>& args) {
  ProfileOptions options;
  std::vector<std::string> shared;
  std::vector<std::string> given;   // names of the shared flags on the command line
  std::set<std::string> own_given;  // the shared ones are checked by their parser
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const std::size_t equals = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;
    const std::string name = arg.substr(0, equals);
    const bool value_inline = equals != std::string::npos;
    if (!is_shared(name) && !own_given.insert(name).second) throw UsageError(name + " given twice");
    if (name == "--help" || name == "-h" || name == "--memory-table" || name == "--trace" ||
        name == "--graph" || name == "--idle-study" || name == "--memory-timeline" || name == "--counters") {
      if (value_inline) throw UsageError(name + ": this flag takes no value");
      if (name == "--memory-table") options.memory_table = true;
      else if (name == "--counters") options.counters = true;
      else if (name == "--memory-timeline") options.memory_timeline = true;
      else if (name == "--trace") options.trace = true;
      else if (name == "--graph") options.graph = true;
      else if (name == "--idle-study") options.idle_study = true;
      else options.help = true;
    } else if (name == "--out") {
      if (!value_inline && i + 1 == args.size()) throw UsageError("--out: missing value");
      options.out_dir = value_inline ? arg.substr(equals + 1) : args[++i];
      if (options.out_dir.empty()) throw UsageError("--out '': empty path");
      if (options.out_dir == "-") throw UsageError("--out '-': a directory cannot be standard output");
    } else if (is_shared(name)) {
      given.push_back(name);
      shared.push_back(arg);
      if (!value_inline && i + 1 < args.size()) shared.push_back(args[++i]);
    } else {
      throw UsageError("unknown flag '" + name + "'");
    }
  }
  if (options.trace && options.out_dir.empty())
    throw UsageError("--trace writes DIR/trace.json: it needs --out DIR");
  if (options.memory_timeline) {
    if (options.out_dir.empty())
      throw UsageError("--memory-timeline writes its pictures to DIR: it needs --out DIR");
    if (options.memory_table || options.trace || options.graph || options.idle_study)
      throw UsageError(
          "--memory-timeline runs on its own: leave out --memory-table, --trace, --graph and --idle-study");
  }

  if (options.counters) {
    if (options.out_dir.empty())
      throw UsageError("--counters writes its reports and pictures to DIR: it needs --out DIR");
    if (options.memory_table || options.trace || options.graph || options.idle_study ||
        options.memory_timeline)
      throw UsageError(
          "--counters runs on its own: leave out --memory-table, --trace, --graph, --idle-study and "
          "--memory-timeline");
  }

  harness::RunFlags parsed = harness::parse_run_flags(shared);
  if (options.idle_study) {
    if (options.graph)
      throw UsageError("--graph: the idle study runs every configuration both eager and as a graph");
    if (options.memory_table || options.trace)
      throw UsageError(std::string(options.memory_table ? "--memory-table" : "--trace") +
                       " does not apply to --idle-study");
    // The lists the user left out: transformer_bench's GPU defaults, its one definition.
    bench::DriverOptions sweep;
    static_cast<harness::RunFlags&>(sweep) = parsed;
    bench::resolve_defaults(sweep, /*on_gpu=*/true);
    parsed = sweep;
    options.modes = parsed.modes;
  } else if (!parsed.modes.empty()) {
    throw UsageError("--mode applies to --idle-study only (the profile runs forward-only and train step)");
  }
  if (!parsed.sizes.empty()) options.sizes = parsed.sizes;
  if (!parsed.contexts.empty()) options.contexts = parsed.contexts;
  if (!parsed.precisions.empty()) options.precisions = parsed.precisions;
  options.attentions = parsed.attentions;
  options.batch = parsed.batch;
  options.warmup = parsed.warmup;
  options.steps = parsed.steps;
  options.seed = parsed.seed;
  options.custom = parsed.custom;
  if (options.memory_timeline) {
    const auto absent = [&](const char* flag) {
      return std::find(given.begin(), given.end(), flag) == given.end();
    };
    if (absent("--size")) options.sizes = memory_timeline_sizes;
    if (absent("--ctx")) options.contexts = memory_timeline_contexts;
    if (absent("--warmup")) options.warmup = memory_timeline_warmup;
    if (absent("--steps")) options.steps = memory_timeline_steps;
  }
  if (options.counters) {
    const auto absent = [&](const char* flag) {
      return std::find(given.begin(), given.end(), flag) == given.end();
    };
    if (absent("--ctx")) options.contexts = counters_contexts;
    if (absent("--warmup")) options.warmup = counters_warmup;
    if (absent("--steps")) options.steps = counters_steps;
  }
  return options;
}

std::string profile_usage_text() {
  return "usage: transformer_profile [flags]\n"
         "Profiles the CS336 Transformer LM with gpuprof's kernel capture (CUPTI) and answers\n"
         "the course's profiling questions (a)-(e) from measured kernels, per configuration\n"
         "(size x ctx x precision x attention). Needs a GPU; see docs/profiling.md.\n"
         "\n"
         "  --size LIST        model sizes (default small,large; custom as in transformer_bench)\n"
         "  --ctx LIST         context lengths (default 128,256,512,1024)\n"
         "  --precision LIST   fp32, tf32, bf16 (default bf16)\n"
         "  --attention LIST   naive (question (e) times its softmax and matmuls apart), fused\n"
         "                     (our flash attention, bf16 only), cudnn (cuDNN's fused attention,\n"
         "                     bf16 only, where the build found cuDNN 9). Default: cudnn where\n"
         "                     built, else fused where it runs\n"
         "  --batch N          sequences per step (default 4)\n"
         "  --warmup N         warm-up steps, left out of the analysis (default 5)\n"
         "  --steps N          profiled steps per mode (default 10)\n"
         "  --seed N           parameters and token ids (default 0)\n"
         "  --graph            capture each run's step (after the warm-up) as one CUDA graph\n"
         "                     and profile its replays (the memory table stays eager; default:\n"
         "                     eager)\n"
         "  --idle-study       instead of the questions: for every configuration of\n"
         "                     transformer_bench's default sweep (small; ctx 128..1024; fwd,\n"
         "                     fwdbwd, step; fp32, bf16), step time eager vs graph (capture off)\n"
         "                     and the GPU idle share of the step, eager vs graph (capture on);\n"
         "                     DIR/idle_study.md and .json (schema gpuprof.transformer_idle_study)\n"
         "                     with --out. --mode LIST (fwd, fwdbwd, step) and the lists above\n"
         "                     narrow the sweep\n"
         "  --out DIR          write DIR/profile.md, DIR/profile.json (schema\n"
         "                     gpuprof.transformer_profile) and DIR/kern_sum/*.csv\n"
         "                     (default: no files; the markdown report goes to stdout)\n"
         "  --memory-table     also measure peak memory of the 2.7B model at ctx 128,256,512,\n"
         "                     forward-only vs train step, fp32 vs bf16 (default off)\n"
         "  --trace            write DIR/trace.json: one profiled train step of the first\n"
         "                     configuration (Perfetto / chrome://tracing); needs --out\n"
         "  --memory-timeline  instead of the questions: device memory over a forward-only run\n"
         "                     and a train-step run per configuration, from the backend's\n"
         "                     construction to its release, as DIR/memory-timeline-*.svg (live\n"
         "                     allocations stacked, coloured by the scope that made them) and\n"
         "                     .html, and DIR/memory-timeline.md (the largest allocations).\n"
         "                     Defaults then: --size 2.7B --ctx 128,512 --warmup 1 --steps 1;\n"
         "                     needs --out; not with --memory-table, --trace or --graph\n"
         "  --counters         instead of the questions: hardware counters per scope (CUPTI range\n"
         "                     profiler) for a forward-only run and a train step per\n"
         "                     configuration, placed under the card's measured ceilings (cuBLAS\n"
         "                     GEMM per precision, copy bandwidth): which scopes are memory- and\n"
         "                     which compute-bound, and how far below their roof. DIR/roofline.md\n"
         "                     and .json (schema transformer_profile.counters), DIR/counters-*.json\n"
         "                     (gpuprof.report) and .svg (rooflines).\n"
         "                     Defaults then: --ctx 128 --warmup 1 --steps 2; needs --out; on its own\n"
         "  -h, --help         this text\n"
         "\n"
         "Each flag at most once; --flag=value works too. The GPU is checked before --out DIR\n"
         "is created.\n"
         "Exit status: 0 done, 1 a configuration failed (other than OOM) or an output\n"
         "(standard output included) could not be written, 2 bad flags, 3 no usable GPU or\n"
         "CUPTI cannot capture.\n";
}

}  // namespace transformer::profile
