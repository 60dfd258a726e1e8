// The smallest real use of gpuprof: two nested scopes, then the report.
#include <iostream>

#include <gpuprof/gpuprof.hpp>

int main() {
  for (int i = 0; i < 3; ++i) {
    GPUPROF_SCOPE("consumer");
    GPUPROF_SCOPE("work");
  }
  const gpuprof::Report report = gpuprof::profiler().report();
  report.print(std::cout);
  return report.nodes.size() == 2 && report.nodes[1].path == "consumer/work" ? 0 : 1;
}
