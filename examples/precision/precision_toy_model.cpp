// precision_toy_model: docs/model.md's toy model (fc1 → ReLU → LayerNorm → fc2)
// under fp32, fp16-mixed and bf16-mixed policies, on the CPU (Eigen) and,
// when there is a GPU, with cuBLAS. It answers the course's questions on
// mixed precision from the running code: (a) the dtype of each tensor, read
// from the types the computation really used, with the loss and gradient
// errors against an fp64 run; (b) why LayerNorm stays in fp32, shown on rows
// whose statistics overflow or cancel in fp16 and lose digits in bf16.
//
//   precision_toy_model [--seed N] [--json PATH]
#include <cmath>
#include <ostream>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof/table.hpp>

#include "accumulation.hpp"  // python_repr
#include "cli.hpp"
#include "gpu.hpp"
#include "layernorm_statistics.hpp"
#include "toy_model.hpp"

namespace {

struct PolicyResult {
  precision::Policy policy;
  precision::ToyRun run;
  double loss_error;      // |loss − fp64 loss| / fp64 loss
  double gradient_error;  // ‖grad − fp64 grad‖ / ‖fp64 grad‖
};

std::vector<PolicyResult> run_policies(const precision::ToyProblem& problem,
                                       const precision::ToyRun& reference, bool on_gpu) {
  std::vector<PolicyResult> results;
  for (precision::Policy policy : precision::all_policies()) {
    precision::ToyRun run;
#if PRECISION_WITH_CUDA
    run = on_gpu ? precision::run_toy_model_on_gpu(problem, policy)
                 : precision::run_toy_model_on_cpu(problem, policy);
#else
    (void)on_gpu;
    run = precision::run_toy_model_on_cpu(problem, policy);
#endif
    const double loss_error = std::abs(run.loss - reference.loss) / std::abs(reference.loss);
    const double gradient_error = precision::relative_error(run.gradients, reference.gradients);
    results.push_back({policy, std::move(run), loss_error, gradient_error});
  }
  return results;
}

void print_policies(std::ostream& out, const std::string& title, const std::vector<PolicyResult>& results) {
  out << title << ": dtype of each tensor, read from the element type the code produced\n";
  gpuprof::Table table({{"policy", gpuprof::Align::left, 11},
                        {"parameters", gpuprof::Align::left, 10},
                        {"fc1 out", gpuprof::Align::left, 7},
                        {"LN out", gpuprof::Align::left, 6},
                        {"logits", gpuprof::Align::left, 6},
                        {"loss", gpuprof::Align::left, 4},
                        {"grads", gpuprof::Align::left, 5},
                        {"loss value", gpuprof::Align::left, 19},
                        {"loss rel. err", gpuprof::Align::left, 23},
                        {"grad rel. err (vs fp64)"}});
  for (const PolicyResult& result : results) {
    const precision::ToyDtypes& d = result.run.dtypes;
    table.add_row({precision::policy_name(result.policy), d.parameters, d.fc1_output, d.layernorm_output,
                   d.logits, d.loss, d.gradients, precision::python_repr(result.run.loss),
                   precision::python_repr(result.loss_error), precision::python_repr(result.gradient_error)});
  }
  table.print(out, {"  ", " "});
}

void write_policies(gpuprof::JsonWriter& json, const std::vector<PolicyResult>& results) {
  json.begin_array();
  for (const PolicyResult& result : results) {
    const precision::ToyDtypes& d = result.run.dtypes;
    json.begin_object()
        .member("policy", precision::policy_name(result.policy))
        .key("dtypes")
        .begin_object(gpuprof::JsonWriter::one_line)
        .member("parameters", d.parameters)
        .member("fc1_output", d.fc1_output)
        .member("layernorm_output", d.layernorm_output)
        .member("logits", d.logits)
        .member("loss", d.loss)
        .member("gradients", d.gradients)
        .end_object()
        .member("loss", result.run.loss)
        .member("loss_relative_error_vs_fp64", result.loss_error)
        .member("gradient_relative_error_vs_fp64", result.gradient_error)
        .end_object();
  }
  json.end_array();
}

void write_layernorm(gpuprof::JsonWriter& json) {
  json.begin_array();
  for (const precision::LayerNormInputs& inputs : precision::layernorm_demo_inputs()) {
    json.begin_object().member("inputs", inputs.label).key("values");
    json.begin_array(gpuprof::JsonWriter::one_line);
    for (double value : inputs.values) json.value(value);
    json.end_array().key("statistics").begin_array();
    // NaN and inf become null in JSON; "finite" keeps the difference visible.
    for (const precision::LayerNormStatistics& row : precision::layernorm_statistics(inputs))
      json.begin_object(gpuprof::JsonWriter::one_line)
          .member("dtype", row.dtype)
          .member("formula", precision::formula_name(row.formula))
          .member("mean", row.mean)
          .member("variance", row.variance)
          .member("variance_finite", std::isfinite(row.variance))
          .member("max_output_error", row.max_output_error)
          .end_object();
    json.end_array().end_object();
  }
  json.end_array();
}

// The tables go to `out` (standard error with --json -, standard output
// then carrying the JSON alone).
int run(const precision::ProgramOptions& options, std::ostream& out) {
  const precision::ToyDimensions dims;
  const precision::ToyProblem problem = precision::make_toy_problem(dims, options.seed);
  const precision::ToyRun reference =
      precision::run_toy_model_in_double(problem, precision::widen(problem.parameters));
  out << "Toy model: fc1 (" << dims.in_features << "→" << dims.hidden << ") → ReLU → LayerNorm("
      << dims.hidden << ") → fc2 (" << dims.hidden << "→" << dims.out_features << "), batch " << dims.batch
      << ", seed " << options.seed << "; fp64 loss " << precision::python_repr(reference.loss) << "\n\n";

  const std::vector<PolicyResult> cpu = run_policies(problem, reference, false);
  print_policies(out, "CPU (Eigen)", cpu);

  std::vector<PolicyResult> gpu;
  const std::optional<std::string> gpu_unavailable = precision::gpu_rows_unavailable();
  if (gpu_unavailable) {
    out << "\nGPU rows not run: " << *gpu_unavailable << ".\n";
  } else {
    gpu = run_policies(problem, reference, true);
    out << '\n';
    print_policies(out, "GPU (cuBLAS GEMMs with fp32 compute)", gpu);
    out << "  GPU vs CPU gradients, ‖gpu − cpu‖/‖cpu‖:";
    for (std::size_t i = 0; i < gpu.size(); ++i)
      out << ' ' << precision::policy_name(gpu[i].policy) << ' '
          << precision::python_repr(precision::relative_error(gpu[i].run.gradients, cpu[i].run.gradients))
          << (i + 1 < gpu.size() ? ";" : "\n");
  }

  out << "\n(b) Why LayerNorm runs in fp32: its statistics in each dtype (sums "
         "rounded to the dtype at every step; outputs normalized in fp64 with them)\n";
  for (const precision::LayerNormInputs& inputs : precision::layernorm_demo_inputs())
    precision::print_layernorm_statistics(out, inputs, precision::layernorm_statistics(inputs));
  out << "  fp16 (max 65504) overflows on x² for |x| > 255, and its 11-bit significand\n"
         "  cancels E[x²] − E[x]² when the values share a large offset; the two-pass\n"
         "  formula avoids the overflow but still rounds the mean. bf16 has fp32's range,\n"
         "  so nothing overflows, but with 8 significant bits it rounds the inputs, the\n"
         "  mean and the variance far more: LayerNorm and softmax stay fp32 under autocast.\n";

  if (options.json_path) {
    gpuprof::JsonWriter json;
    json.begin_object()
        .member("program", "precision_toy_model")
        .member("seed", options.seed)
        .key("dimensions")
        .begin_object(gpuprof::JsonWriter::one_line)
        .member("batch", dims.batch)
        .member("in_features", dims.in_features)
        .member("hidden", dims.hidden)
        .member("out_features", dims.out_features)
        .end_object()
        .member("fp64_loss", reference.loss)
        .key("cpu");
    write_policies(json, cpu);
    json.key("gpu");
    if (gpu_unavailable) json.value(nullptr);
    else write_policies(json, gpu);
    json.member("gpu_not_run_reason", gpu_unavailable.value_or("")).key("layernorm_statistics");
    write_layernorm(json);
    json.end_object();
    gpuprof::write_file_atomically(*options.json_path, json.str() + "\n");
    out << "\nwrote " << *options.json_path << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return precision::run_demo("precision_toy_model", /*accepts_seed=*/true, argc, argv, run);
}
