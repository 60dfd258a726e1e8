// The smallest real use of gpuprof: two nested scopes, then the report and
// the build facts it carries (run_consumer.cmake checks they are this
// project's, not gpuprof's).
#include <iostream>

#include <gpuprof/gpuprof.hpp>

int main() {
  for (int i = 0; i < 3; ++i) {
    GPUPROF_SCOPE("consumer");
    GPUPROF_SCOPE("work");
  }
  const gpuprof::Report report = gpuprof::profiler().report();
  gpuprof::print_table(report, std::cout);
  std::cout << "build type: " << report.environment.build_type << '\n'
            << "flags: " << report.environment.compiler_flags << '\n'
            << "revision: " << report.environment.git_revision << '\n';
  return report.nodes.size() == 2 && report.nodes[1].path == "consumer/work" ? 0 : 1;
}
