// bench/output_table.cpp: the results table printed on stdout.
#include <algorithm>
#include <ostream>

#include "output.hpp"
#include "text_table.hpp"

namespace transformer::bench {
namespace {

template <typename Integer>
std::optional<double> as_double(const std::optional<Integer>& value) {
  if (!value) return std::nullopt;
  return static_cast<double>(*value);
}

std::string status_text(const ResultRow& row) {
  switch (row.status) {
    case RowStatus::ok:
      return "ok";
    case RowStatus::oom:
      return oom_text(row);
    case RowStatus::unsupported:
      return "unsupported (" + row.note + ")";
    case RowStatus::error:
      return "error: " + row.note;
  }
  return "?";
}

std::string torch_median_text(const ResultRow& row) {
  if (!row.torch) return "-";
  if (row.torch->oom) return "OOM";
  return fixed(row.torch->median_ms, 2);
}

std::string percent(const std::optional<double>& fraction) {
  if (!fraction) return "-";
  return fixed(*fraction * 100.0, 1) + "%";
}

}  // namespace

std::string oom_text(const ResultRow& row) {
  return "OOM (needs " + gib(as_double(row.bytes_requested)) + " GiB, " +
         gib(as_double(row.bytes_free)) + " GiB free)";
}

void print_results_table(std::ostream& out, const BenchResults& results) {
  const bool with_torch = std::any_of(results.rows.begin(), results.rows.end(),
                                      [](const ResultRow& row) { return row.torch.has_value(); });
  std::vector<std::string> header = {"size",    "ctx",       "mode",     "prec",     "mean ms",
                                     "std ms",  "median ms", "min ms",   "cold ms",  "tokens/s",
                                     "TFLOP/s", "MFU",       "peak GiB", "alloc GiB"};
  if (with_torch) header.insert(header.end(), {"torch ms", "speedup", "mem ratio"});
  header.emplace_back("status");

  TextTable table(header);
  for (const ResultRow& row : results.rows) {
    std::vector<std::string> cells = {row.size,
                                      std::to_string(row.ctx),
                                      to_string(row.mode),
                                      to_string(row.precision),
                                      fixed(row.mean_ms, 2),
                                      fixed(row.std_ms, 2),
                                      fixed(row.median_ms, 2),
                                      fixed(row.min_ms, 2),
                                      fixed(row.cold_ms, 1),
                                      fixed(row.tokens_per_s, 0),
                                      fixed(row.tflops, 2),
                                      percent(row.mfu),
                                      gib(as_double(row.peak_mem_bytes)),
                                      gib(as_double(row.allocated_bytes))};
    if (with_torch) {
      cells.push_back(torch_median_text(row));
      const auto speedup = row.speedup_vs_torch();
      cells.push_back(speedup ? fixed(speedup, 2) + "x" : "-");
      const auto memory_ratio = row.memory_ratio_vs_torch();
      cells.push_back(memory_ratio ? fixed(memory_ratio, 2) + "x" : "-");
    }
    cells.push_back(status_text(row));
    table.add_row(std::move(cells));
  }
  out << results.backend << " backend on " << results.device << "; batch " << results.batch << ", "
      << results.warmup << " warm-up + " << results.steps << " timed steps per configuration"
      << (results.graph ? ", each timed step one replay of the step captured as a CUDA graph" : "")
      << "\n";
  table.print(out);
}

}  // namespace transformer::bench
