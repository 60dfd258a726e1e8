// tests/html_fixture.cpp: writes the synthetic training report as JSON (the
// input of gpuprof-report in the browser test) and prints its scope count.
#include <iostream>

#include "support/synthetic_report.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gpuprof_html_fixture REPORT.json\n";
    return 2;
  }
  const gpuprof::Report report = gpuprof_test::synthetic_training_report();
  gpuprof::write_json(report, argv[1]);
  std::cout << report.nodes.size() << "\n";
  return 0;
}
