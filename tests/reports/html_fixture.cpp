// tests/html_fixture.cpp: writes the synthetic training report as JSON (the
// input of gpuprof-report in the browser test), with hardware counters for
// two scopes and a card's ceilings, and prints its scope count.
#include <iostream>

#include "support/synthetic_report.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gpuprof_html_fixture REPORT.json\n";
    return 2;
  }
  gpuprof::Report report = gpuprof_test::synthetic_training_report();
  // attention right of the bf16 ridge (1000 FLOP/B), mlp left of it (10 FLOP/B).
  const auto range = [](const char* path, double bytes, double flops) {
    return gpuprof::CounterRange{path,
                                 {{gpuprof::metric::duration_ns, 1e6},
                                  {gpuprof::metric::dram_bytes_read, bytes},
                                  {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", flops}}};
  };
  report.counters.metrics = {gpuprof::metric::duration_ns, gpuprof::metric::dram_bytes_read};
  report.counters.passes = 2;
  report.counters.scopes = {range("step/forward/attention", 4e8, 4e11), range("step/forward/mlp", 1e9, 1e10)};
  report.ceilings.pipes = {{"tensor bf16", 800e12}};
  report.ceilings.dram_bytes_per_s = 2e12;
  gpuprof::write_json(report, argv[1]);
  std::cout << report.nodes.size() << "\n";
  return 0;
}
