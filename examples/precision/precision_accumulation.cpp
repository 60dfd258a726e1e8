// precision_accumulation: sums 0.01 a thousand times for each accumulator /
// addend pair of docs/model.md (fp32, fp16, bf16 and the mixed ones), on the CPU
// and, when there is a GPU, in CUDA kernels; sequentially (the course's
// loop), with Kahan compensation and as a pairwise tree; prints one table
// per device and why each result is what it is. --json PATH writes them.
//
//   precision_accumulation [--json PATH]
#include <ostream>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/json_writer.hpp>

#include "accumulation.hpp"
#include "cli.hpp"
#include "gpu.hpp"

namespace {

void write_rows(gpuprof::JsonWriter& json, const std::vector<precision::AccumulationRow>& rows) {
  json.begin_array();
  for (const precision::AccumulationRow& row : rows) {
    json.begin_object(gpuprof::JsonWriter::one_line)
        .member("accumulator", row.accumulator)
        .member("addend", row.addend)
        .member("addend_value", row.addend_value)
        .member("sequential", row.sequential)
        .member("kahan", row.kahan)
        .member("pairwise", row.pairwise)
        .member("nearest_total", row.nearest_total)
        .member("sequential_error", row.sequential - precision::kExactTotal)
        .end_object();
  }
  json.end_array();
}

// The tables go to `out` (standard error with --json -, standard output
// then carrying the JSON alone).
int run(const precision::ProgramOptions& options, std::ostream& out) {
  const std::vector<precision::AccumulationRow> cpu_rows = precision::accumulate_on_cpu();
  precision::print_accumulation_table(out, "CPU (float, Eigen::half, Eigen::bfloat16)", cpu_rows);

  std::vector<precision::AccumulationRow> gpu_rows;
  const std::optional<std::string> gpu_unavailable = precision::gpu_rows_unavailable();
  if (gpu_unavailable) {
    out << "\nGPU rows not run: " << *gpu_unavailable << ".\n";
  } else {
#if PRECISION_WITH_CUDA
    gpu_rows = precision::accumulate_on_gpu();
    out << '\n';
    precision::print_accumulation_table(out, "GPU (float, __half, __nv_bfloat16)", gpu_rows);
#endif
  }
  precision::print_accumulation_explanation(out, cpu_rows);

  if (options.json_path) {
    gpuprof::JsonWriter json;
    json.begin_object()
        .member("program", "precision_accumulation")
        .member("addend_count", precision::kAddendCount)
        .member("exact_total", precision::kExactTotal)
        .key("cpu");
    write_rows(json, cpu_rows);
    json.key("gpu");
    if (gpu_unavailable) json.value(nullptr);
    else write_rows(json, gpu_rows);
    json.member("gpu_not_run_reason", gpu_unavailable.value_or("")).end_object();
    gpuprof::write_file_atomically(*options.json_path, json.str() + "\n");
    out << "\nwrote " << *options.json_path << '\n';
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return precision::run_demo("precision_accumulation", /*accepts_seed=*/false, argc, argv, run);
}
