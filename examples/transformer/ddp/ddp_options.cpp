// ddp/ddp_options.cpp: transformer_ddp's flags on top of the harness's parser.
#include "ddp/ddp_options.hpp"

#include <cmath>
#include <cstdlib>

namespace transformer::ddp {
namespace {

using harness::UsageError;

template <class T>
const T& single(const std::vector<T>& values, const char* flag) {
  if (values.size() != 1)
    throw UsageError(std::string(flag) + ": transformer_ddp runs one configuration; give one value");
  return values.front();
}

// The one rank this process is, when a launcher set RANK.
std::optional<gpuprof::RankInfo> launched_rank() {
  const char* rank_text = std::getenv("RANK");
  if (rank_text == nullptr || *rank_text == '\0') return std::nullopt;
  gpuprof::RankInfo info = gpuprof::rank_variables();
  if (info.rank < 0) throw UsageError(std::string("RANK='") + rank_text + "': not a whole number ≥ 0");
  if (info.world_size < 1)
    throw UsageError("RANK is set but WORLD_SIZE is missing or not a whole number ≥ 1");
  if (const std::string problem = gpuprof::rank_inconsistency(info); !problem.empty())
    throw UsageError(problem);
  // One host: the rank is the GPU.
  if (info.local_rank < 0) info.local_rank = info.rank;
  return info;
}

}  // namespace

DdpOptions parse_ddp_options(const std::vector<std::string>& args) {
  DdpOptions options;
  options.run.sizes = {"small"};
  options.run.contexts = {512};
  options.run.precisions = {Precision::bf16};
  harness::FlagParser parser(options.run);
  parser.add_integer("--gpus", options.gpus, 1);
  parser.add_value("--bucket-mb", [&options](const std::string& value) {
    char* end = nullptr;
    const double mb = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(mb) || mb <= 0)
      throw UsageError("--bucket-mb '" + value + "': not a positive number");
    options.bucket_mb = mb;
  });
  parser.add_switch("--profile", [&options] { options.profile = true; });
  parser.add_path("--json", options.json_path);
  parser.add_directory("--reports", options.report_dir);
  parser.add_path("--id-file", options.id_file);
  parser.add_integer("--timeout", options.timeout_s, 1);
  parser.add_switch("--help", [&options] { options.help = true; });
  parser.add_switch("-h", [&options] { options.help = true; });
  bool gpus_given = false;
  for (const std::string& arg : args)
    if (arg == "--gpus" || arg.rfind("--gpus=", 0) == 0) gpus_given = true;
  parser.parse(args);
  if (options.help) return options;

  single(options.run.sizes, "--size");
  single(options.run.contexts, "--ctx");
  single(options.run.precisions, "--precision");
  if (!options.run.attentions.empty()) single(options.run.attentions, "--attention");
  for (const Mode mode : options.run.modes)
    if (mode != Mode::step) throw UsageError("--mode: transformer_ddp trains (step) only");
  if (options.run.device == harness::DeviceChoice::cpu)
    throw UsageError("--device cpu: data parallelism needs CUDA GPUs");
  const std::string why_not = harness::unsupported_attention(rank_run_config(options));
  if (!why_not.empty()) throw UsageError("--attention: " + why_not);

  options.launched_rank = launched_rank();
  if (options.id_file.empty())
    if (const char* path = std::getenv("GPUPROF_DDP_ID_FILE")) options.id_file = path;
  if (options.launched_rank) {
    if (gpus_given)
      throw UsageError("--gpus forks its own ranks, but RANK is set: this process is rank " +
                       std::to_string(options.launched_rank->rank) + " of a run another launcher started");
    if (options.launched_rank->world_size > 1 && options.id_file.empty())
      throw UsageError(
          "RANK is set: give --id-file PATH (or GPUPROF_DDP_ID_FILE), a path every "
          "rank sees and none has written yet, for NCCL's unique id");
  } else if (!options.id_file.empty()) {
    throw UsageError(
        "--id-file is for ranks started by another launcher (RANK set); --gpus passes "
        "the id itself");
  }
  return options;
}

RunConfig rank_run_config(const DdpOptions& options) {
  RunConfig config;
  config.model = model_for_size(options.run.sizes.front(), options.run.custom);
  config.precision = options.run.precisions.front();
  config.mode = Mode::step;
  config.ctx = options.run.contexts.front();
  config.attention =
      harness::attentions_for(options.run.attentions, config.precision, config.model, config.ctx).front();
  config.batch = options.run.batch;
  config.seed = options.run.seed;
  return config;
}

std::size_t bucket_cap_elements(double bucket_mb, std::size_t element_bytes) {
  const double elements = bucket_mb * 1024.0 * 1024.0 / static_cast<double>(element_bytes);
  return elements < 1 ? 1 : static_cast<std::size_t>(elements);
}

std::string ddp_usage_text() {
  return "usage: transformer_ddp [--gpus N] [flags]\n"
         "Data-parallel training of the Transformer LM (the step of transformer_bench), one\n"
         "process per GPU, gradients all-reduced over NCCL in buckets overlapped with backward.\n"
         "\n"
         "  --gpus N          ranks to fork, one per GPU (default: every visible GPU)\n"
         "  --size S          " +
         harness::joined_size_names() +
         " (default small)\n"
         "  --ctx T           context length (default 512)\n"
         "  --precision P     fp32, tf32, bf16 (default bf16)\n"
         "  --attention A     naive, fused or cudnn (default for bf16: cudnn where the build\n"
         "                    found cuDNN 9, else fused where it applies)\n"
         "  --batch B         sequences per GPU (default 4); the global batch is B x ranks\n"
         "  --warmup W --steps N --seed S   as transformer_bench (defaults 5, 10, 0)\n"
         "  --bucket-mb X     all-reduce bucket cap in MiB (default 25)\n"
         "  --profile         capture kernels (CUPTI): communication share and overlap per step\n"
         "                    (default off)\n"
         "  --reports DIR     every rank's gpuprof report, DIR/transformer_ddp.rank<R>.json\n"
         "                    (combine with gpuprof-merge; default: none)\n"
         "  --json PATH       the run's figures as JSON, schema gpuprof.transformer_ddp (default:\n"
         "                    none); \"-\" is standard output, and the table then goes to standard error\n"
         "  --timeout S       terminate every rank after S seconds (default 1800)\n"
         "  --id-file PATH    launched ranks only: where rank 0 leaves NCCL's unique id\n"
         "  -h, --help        this text\n"
         "\n"
         "Started by another launcher, set RANK, WORLD_SIZE, LOCAL_RANK (default: RANK) and\n"
         "--id-file or GPUPROF_DDP_ID_FILE; then the process is that one rank.\n"
         "Each flag at most once; --flag=value works too.\n"
         "Exit status: 0 done, 1 a rank failed or standard output could not be written, 2 bad\n"
         "input (e.g. more GPUs than visible), 3 no usable GPU.\n";
}

}  // namespace transformer::ddp
