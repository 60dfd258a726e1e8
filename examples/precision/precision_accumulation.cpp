// precision_accumulation: sums 0.01 a thousand times for each accumulator /
// addend pair of docs/model.md (fp32, fp16, bf16 and the mixed ones), on the CPU
// and, when there is a GPU, in CUDA kernels; sequentially (the course's
// loop), with Kahan compensation and as a pairwise tree; prints one table
// per device and why each result is what it is. --json PATH writes them.
//
//   precision_accumulation [--json PATH]
#include <exception>
#include <iostream>

#include <gpuprof/terminal_text.hpp>
#include <gpuprof/atomic_file.hpp>
#include <gpuprof/json_writer.hpp>
#include <gpuprof_cli/standard_output.hpp>

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

}  // namespace

int main(int argc, char** argv) {
  gpuprof::guard_standard_streams();
  const precision::ParsedCommandLine command_line =
      precision::parse_command_line("precision_accumulation", argc, argv, /*accepts_seed=*/false);
  if (command_line.exit_status) return *command_line.exit_status;
  const precision::ProgramOptions& options = command_line.options;
  // With --json -, standard output carries the JSON alone; the tables go to stderr.
  std::ostream& out = options.json_path == "-" ? std::cerr : std::cout;

  try {
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
    return gpuprof::finish_standard_output("precision_accumulation", 0);
  } catch (const std::exception& error) {
    std::cerr << "precision_accumulation: " << gpuprof::terminal_safe(error.what()) << '\n';
    return 1;
  }
}
