// bench/driver_options.cpp: transformer_bench's own flags on top of the shared parser (see usage_text()).
#include "bench/driver_options.hpp"

#include <algorithm>
#include <string>

#include "harness/bench_results.hpp"

namespace transformer::bench {

DriverOptions parse_options(const std::vector<std::string>& args) {
  DriverOptions options;
  harness::FlagParser parser(options);
  parser.add_integer("--loss-curve", options.loss_curve_steps, 1);
  parser.add_path("--json", options.json_path);
  parser.add_path("--csv", options.csv_path);
  parser.add_directory("--dump", options.dump_dir);
  parser.add_path("--torch-jsonl", options.torch_jsonl_path);
  parser.add_path("--report-json", options.report_json_path);
  parser.add_path("--trace", options.trace_path);
  parser.add_switch("--help", [&options] { options.help = true; });
  parser.add_switch("-h", [&options] { options.help = true; });
  parser.add_switch("--report", [&options] { options.print_report = true; });
  parser.add_switch("--warmup-study", [&options] { options.warmup_study = true; });
  const auto set_graph = [&options](const char* flag, bool graph) {
    if (options.graph && *options.graph != graph)
      throw harness::UsageError(std::string(flag) + ": --graph and --eager exclude each other");
    options.graph = graph;
  };
  parser.add_switch("--graph", [set_graph] { set_graph("--graph", true); });
  parser.add_switch("--eager", [set_graph] { set_graph("--eager", false); });
  parser.parse(args);
  return options;
}

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

std::string usage_text() {
  return "usage: transformer_bench [flags]\n"
         "Times the CS336 Transformer LM: w warm-up steps, then n timed steps (CUDA events,\n"
         "synchronized after every step), over sizes x precisions x attentions x contexts x modes.\n"
         "Lists are comma-separated.\n"
         "\n"
         "  --size LIST        " +
         harness::joined_size_names() +
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
         "  --attention LIST   naive (scores, softmax, P·V apart), fused (our flash attention,\n"
         "                     bf16 only; d_head 64, 80, 96, 128), cudnn (cuDNN's fused\n"
         "                     attention, bf16 only, where the build found cuDNN 9). Default\n"
         "                     for bf16: fused at ctx <= 256 with d_head 64, else cudnn\n"
         "                     where built; fused where it runs; naive otherwise\n"
         "  --device D         auto (default: CUDA when usable, else CPU), cuda, cpu\n"
         "  --seed N           parameters and token ids (default 0)\n"
         "  --json PATH        write every row as JSON (schema gpuprof.bench: one benchmark per\n"
         "                     configuration, its columns as fields); default: no file\n"
         "  --csv PATH         the same rows as CSV; default: no file\n"
         "  --torch-jsonl PATH join rows of scripts/torch_reference.py (speedup = torch median / "
         "ours);\n"
         "                     default: none\n"
         "  --dump DIR         after one train step of the first configuration, write tokens,\n"
         "                     parameters, loss, logits, gradients as .npy "
         "(docs/transformer-dump.md);\n"
         "                     default: no dump\n"
         "  --warmup-study     mean/std of the timed steps after 0, 1, 2, 5 warm-ups (default off)\n"
         "  --loss-curve N     loss of N train steps per precision, from one initialisation\n"
         "                     (default: none)\n"
         "  --report           print gpuprof's scope tree at the end (default off)\n"
         "  --report-json PATH write gpuprof's report as JSON; default: no file\n"
         "  --trace PATH       write gpuprof's Chrome trace; default: no file\n"
         "  --help             this text\n"
         "\n"
         "A PATH of \"-\" is standard output: that document alone goes there and the tables\n"
         "go to standard error. Outputs are checked before anything runs: none may be empty,\n"
         "name an input or another output. Each flag at most once; --flag=value works too.\n"
         "Exit status: 0 done, 1 a run failed or an output (standard output included) could\n"
         "not be written, 2 bad input, 3 --device cuda without a usable GPU.\n";
}

std::vector<RunConfig> sweep_configurations(const DriverOptions& options) {
  std::vector<RunConfig> configs;
  for (const std::string& size : options.sizes)
    for (const Precision precision : options.precisions) {
      const ModelConfig model = model_for_size(size, options.custom);
      // One pass per attention chosen, or one pass of each context's default.
      const std::size_t passes = std::max<std::size_t>(1, options.attentions.size());
      for (std::size_t pass = 0; pass < passes; ++pass)
        for (const int ctx : options.contexts)
          for (const Mode mode : options.modes) {
            const Attention attention =
                harness::attentions_for(options.attentions, precision, model, ctx)[pass];
            RunConfig config;
            config.model = model;
            config.precision = precision;
            config.attention = attention;
            config.mode = mode;
            config.batch = options.batch;
            config.ctx = ctx;
            config.seed = options.seed;
            configs.push_back(config);
          }
    }
  return configs;
}

gpuprof::Axes sweep_axes(const DriverOptions& options) {
  std::vector<gpuprof::AxisPoint> points;
  for (const RunConfig& config : sweep_configurations(options))
    points.push_back(
        harness::sweep_point(config.model.name, config.ctx, config.mode, config.precision, config.attention));
  try {
    return gpuprof::Axes::list(std::move(points));
  } catch (const gpuprof::Error& error) {
    throw harness::UsageError(std::string("the sweep: ") + error.what());
  }
}

}  // namespace transformer::bench
