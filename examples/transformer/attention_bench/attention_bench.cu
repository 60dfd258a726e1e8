// attention_bench: times fused causal attention alone, ours
// (cuda/flash_attention.hpp) and cuDNN's (cuda/cudnn_attention.hpp) where
// the build has it, forward and forward+backward, bf16, at the head shapes
// of the model sizes, batch 4, over a list of context lengths.
// scripts/torch_sdpa_bench.py times torch's scaled_dot_product_attention the
// same way at the same shapes and prints both side by side.
//
// Timing: gpuprof::bench, --warmup calls then --reps samples (CUDA events,
// the device synchronised after each); the table shows medians. FLOPs count
// the causal half only: forward 4·B·H·T²·D/2, backward 2.5 times that (the
// convention of the FlashAttention papers). --json writes gpuprof.bench
// (report/bench_json.hpp): one benchmark per row and pass, its samples and
// the row's shape and TFLOP/s as fields, so gpuprof-compare compares runs.
//
//   attention_bench [--ctx 512,1024,2048,4096] [--attention fused,cudnn] [--reps 30]
//                   [--warmup 5] [--json PATH]   (see usage below)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <gpuprof/bench.hpp>
#include <gpuprof_cli/arguments.hpp>
#include <gpuprof_cli/output_paths.hpp>
#include <gpuprof/report/bench_json.hpp>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "cuda/cudnn_attention.hpp"
#include "cuda/flash_attention.hpp"
#include "model/backend.hpp"

namespace {

using transformer::cuda::AttentionShape;
using bf16 = __nv_bfloat16;

struct HeadShape {
  const char* size;
  int heads, d_head;
};
// model/config.cpp's sizes: heads × d_model/heads.
const HeadShape kHeadShapes[] = {
    {"small", 12, 64}, {"medium", 16, 64}, {"large", 20, 64}, {"xl", 25, 64}, {"2.7B", 32, 80}};
constexpr int kBatch = 4;

constexpr const char* kUsage =
    "usage: attention_bench [--ctx LIST] [--attention LIST] [--reps N] [--warmup N] [--json PATH]\n"
    "Times fused causal attention alone (bf16, batch 4, the head shapes of every model size),\n"
    "forward and forward+backward, with gpuprof::bench (CUDA events). Lists are comma-separated.\n"
    "  --ctx LIST        context lengths (default 512,1024,2048,4096)\n"
    "  --attention LIST  fused (ours) and/or cudnn (default: both where cuDNN is built, else fused)\n"
    "  --reps N          timed calls per row; the median is reported (default 30)\n"
    "  --warmup N        untimed calls first (default 5)\n"
    "  --json PATH       also write the rows as gpuprof.bench JSON, samples included (default:\n"
    "                    no file); \"-\" is standard output, and the table then goes to standard error\n"
    "  -h, --help        this text\n"
    "Each flag at most once.\n"
    "exit status: 0 done; 1 a failed run, or an output (standard output included) that could\n"
    "not be written; 2 bad arguments; 3 no usable GPU\n";

struct Options {
  std::vector<int> ctx = {512, 1024, 2048, 4096};
  std::vector<std::string> attention;  // "fused" (ours) and/or "cudnn"
  int reps = 30, warmup = 5;
  std::string json;
};

int parse_positive(const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  int value = 0;
  try {
    value = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value <= 0)
    throw gpuprof::Error(flag + " wants a positive integer, got '" + text + "'");
  return value;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    items.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// One argument of the command line, in turn (gpuprof::run_tool).
void take(Options& o, gpuprof::Arguments& args, const std::string& arg) {
  if (arg == "--ctx") {
    o.ctx.clear();
    for (const std::string& item : split(args.value_of(arg))) o.ctx.push_back(parse_positive(arg, item));
  } else if (arg == "--attention") {
    o.attention = split(args.value_of(arg));
    for (const std::string& item : o.attention)
      if (item != "fused" && item != "cudnn")
        throw gpuprof::Error("--attention wants fused and/or cudnn, got '" + item + "'");
  } else if (arg == "--reps") {
    o.reps = parse_positive(arg, args.value_of(arg));
  } else if (arg == "--warmup") {
    o.warmup = parse_positive(arg, args.value_of(arg));
  } else if (arg == "--json") {
    o.json = args.path_of(arg);
  } else {
    gpuprof::reject_argument(arg);
  }
}

// The whole command line, before the device and the sweep: a bad path costs nothing.
void check(Options& o) {
  gpuprof::check_output_files({{"--json", o.json}});
  if (o.attention.empty()) {
    o.attention = {"fused"};
    if (transformer::cudnn_attention_available()) o.attention.push_back("cudnn");
  }
}

// Uniform in [−√3, √3] (unit variance) from a hash of the index: random
// enough for timing, never zeros, and generated on the device.
__global__ void fill_random(bf16* data, std::size_t count, std::uint32_t seed) {
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  std::uint32_t x = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  data[i] = __float2bfloat16_rn((static_cast<float>(x) / 4294967296.0f * 2.0f - 1.0f) * 1.7320508f);
}

struct Row {
  std::string attention, size;
  AttentionShape shape;
  gpuprof::BenchResult fwd, fwdbwd;
  double fwd_tflops, fwdbwd_tflops;  // at the medians
};

// cudnn null: ours.
Row measure(const HeadShape& head, int ctx, const Options& o, transformer::cuda::CudnnAttention* cudnn) {
  const AttentionShape shape{kBatch, ctx, head.heads, head.d_head};
  const std::size_t n = static_cast<std::size_t>(shape.score_rows()) * shape.d_head;
  using examples::DeviceBuffer;
  DeviceBuffer<bf16> q(n), k(n), v(n), context(n), dcontext(n), dq(n), dk(n), dv(n);
  DeviceBuffer<float> lse(static_cast<std::size_t>(shape.score_rows()));
  DeviceBuffer<float> workspace(transformer::cuda::flash_attention_workspace_floats(shape));
  std::uint32_t seed = 1;
  for (bf16* p : {q.data(), k.data(), v.data(), dcontext.data()}) {
    fill_random<<<static_cast<unsigned>((n + 255) / 256), 256>>>(p, n, seed++ * 0x9e3779b9u);
    EXAMPLE_LAUNCH_CHECK();
  }
  if (cudnn) cudnn->check_shape(shape);  // plans built before timing
  auto forward = [&] {
    if (cudnn)
      cudnn->forward(shape, transformer::cuda::QkvLayout::head_major, q.data(), k.data(), v.data(),
                     context.data(), lse.data(), nullptr);
    else
      transformer::cuda::flash_attention_forward(shape, q.data(), k.data(), v.data(), context.data(),
                                                 lse.data(), nullptr);
  };
  auto forward_backward = [&] {
    forward();
    if (cudnn)
      cudnn->backward(shape, transformer::cuda::QkvLayout::head_major, q.data(), k.data(), v.data(),
                      context.data(), lse.data(), dcontext.data(), dq.data(), dk.data(), dv.data(),
                      workspace.data(), nullptr);
    else
      transformer::cuda::flash_attention_backward(shape, q.data(), k.data(), v.data(), context.data(),
                                                  lse.data(), dcontext.data(), dq.data(), dk.data(),
                                                  dv.data(), workspace.data(), nullptr);
  };
  gpuprof::BenchOptions options;  // on the default stream, where the kernels run
  options.warmup = o.warmup;
  options.iters = o.reps;
  Row row{cudnn ? "cudnn" : "fused",
          head.size,
          shape,
          gpuprof::bench(forward, options),
          gpuprof::bench(forward_backward, options),
          0,
          0};
  const double fwd_flops = 4.0 * kBatch * head.heads * static_cast<double>(ctx) * ctx * head.d_head / 2;
  row.fwd_tflops = fwd_flops / (row.fwd.primary().median * 1e-3) / 1e12;
  row.fwdbwd_tflops = 3.5 * fwd_flops / (row.fwdbwd.primary().median * 1e-3) / 1e12;
  return row;
}

// One benchmark per row and pass ("fused/small/ctx512/fwdbwd"), the row's
// shape and TFLOP/s as its fields.
void write_json(const std::string& path, const std::vector<Row>& rows) {
  const std::optional<std::string> cudnn = transformer::cudnn_runtime_version();
  std::vector<gpuprof::NamedBenchResult> runs;
  for (const Row& r : rows)
    for (const bool backward : {false, true}) {
      const char* pass = backward ? "fwdbwd" : "fwd";
      gpuprof::BenchFields fields = {
          {"attention", r.attention},
          {"kernel", std::string(r.attention == "cudnn" ? "cuDNN fused attention (graph API)"
                                                        : "gpuprof flash_attention (mma.sync bf16)")},
          {"size", r.size},
          {"batch", std::int64_t{r.shape.batch}},
          {"heads", std::int64_t{r.shape.heads}},
          {"d_head", std::int64_t{r.shape.d_head}},
          {"ctx", std::int64_t{r.shape.ctx}},
          {"pass", std::string(pass)},
          {"tflops", backward ? r.fwdbwd_tflops : r.fwd_tflops}};
      if (r.attention == "cudnn")
        fields.emplace_back("cudnn_version",
                            cudnn ? gpuprof::BenchField(*cudnn) : gpuprof::BenchField(nullptr));
      runs.push_back({r.attention + "/" + r.size + "/ctx" + std::to_string(r.shape.ctx) + "/" + pass,
                      backward ? r.fwdbwd : r.fwd, std::move(fields)});
    }
  gpuprof::write_bench_json(runs, path, {gpuprof::capture_environment()});  // whole; "-": standard output
}

int run(const Options& o) {
  // With --json -, standard output carries the JSON alone; the table goes to stderr.
  std::FILE* text = o.json == "-" ? stderr : stdout;
  // The CUDA backend's own test: a device, sm_80 or newer, and code built for it.
  std::string why_not;
  if (!transformer::cuda_backend_available(&why_not)) {
    std::fprintf(stderr, "attention_bench: no usable GPU: %s\n", why_not.c_str());
    return 3;
  }
  int device = 0;
  GPUPROF_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  GPUPROF_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  std::fprintf(text, "attention_bench on %s: causal bf16, batch %d, median of %d after %d warm-up\n",
               prop.name, kBatch, o.reps, o.warmup);
  std::fprintf(text, "%-9s %-7s %5s %6s %6s  %9s %8s  %10s %8s\n", "attention", "size", "heads", "d_head",
               "ctx", "fwd ms", "TFLOP/s", "fwd+bwd ms", "TFLOP/s");
  std::unique_ptr<transformer::cuda::CudnnAttention> cudnn;
  std::vector<Row> rows;
  for (const HeadShape& head : kHeadShapes)
    for (int ctx : o.ctx)
      for (const std::string& attention : o.attention) {
        if (attention == "cudnn" && !cudnn) cudnn = std::make_unique<transformer::cuda::CudnnAttention>();
        rows.push_back(measure(head, ctx, o, attention == "cudnn" ? cudnn.get() : nullptr));
        const Row& r = rows.back();
        std::fprintf(text, "%-9s %-7s %5d %6d %6d  %9.3f %8.1f  %10.3f %8.1f\n", r.attention.c_str(),
                     r.size.c_str(), head.heads, head.d_head, ctx, r.fwd.primary().median, r.fwd_tflops,
                     r.fwdbwd.primary().median, r.fwdbwd_tflops);
        std::fflush(text);
      }
  if (cudnn)
    std::fprintf(text, "cuDNN %s, engine: %s\n", transformer::cudnn_runtime_version().value_or("?").c_str(),
                 cudnn->engine_name().c_str());
  if (!o.json.empty()) write_json(o.json, rows);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  return gpuprof::run_tool(
      "attention_bench", kUsage, argc, argv,
      [&](gpuprof::Arguments& args, const std::string& arg) { take(options, args, arg); },
      [&] { check(options); }, gpuprof::run_reading_no_input([&] { return run(options); }));
}
