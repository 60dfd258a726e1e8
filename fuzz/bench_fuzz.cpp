// Whatever gpuprof-compare reads (report/read_bench_json.hpp's detail::measured_run_from_json):
// gpuprof.bench files and reports, then the
// comparison of the run with itself as text and markdown.
#include <gpuprof/compare.hpp>
#include <gpuprof/report/read_bench_json.hpp>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gpuprof_fuzz::run([&] {
    const gpuprof::MeasuredRun run = gpuprof::detail::measured_run_from_json(
        gpuprof::detail::parse_json(gpuprof_fuzz::text_of(data, size)));
    const gpuprof::Comparison comparison = gpuprof::compare_runs(run, run);
    (void)gpuprof::to_table(comparison);
    (void)gpuprof::to_markdown(comparison);
  });
}
