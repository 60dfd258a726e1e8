// Whatever gpuprof-compare reads (compare.hpp's detail::measured_run_from_json):
// gpuprof.bench files and reports, then the
// comparison of the run with itself as text and markdown.
#include <gpuprof/compare.hpp>

#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gpuprof_fuzz::run([&] {
    const gpuprof::MeasuredRun run = gpuprof::detail::measured_run_from_json(
        gpuprof::detail::parse_json(gpuprof_fuzz::text_of(data, size)));
    const gpuprof::Comparison comparison = gpuprof::compare_runs(run, run);
    (void)gpuprof::comparison_text(comparison);
    (void)gpuprof::comparison_markdown(comparison);
  });
}
