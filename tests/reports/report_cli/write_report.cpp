// A tiny command-line program for tests/report_cli/output_paths.sh: records
// one scope and writes the report as JSON to the path given, with the error
// handling a CLI should have (message on stderr, exit status 1).
// Usage: gpuprof_write_report PATH
#include <exception>
#include <iostream>

#include <gpuprof/gpuprof.hpp>

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::cerr << "usage: gpuprof_write_report PATH\n";
    return 2;
  }
  { GPUPROF_SCOPE("written"); }
  gpuprof::write_json(gpuprof::profiler().report(), argv[1]);
  return 0;
} catch (const std::exception& error) {
  std::cerr << "gpuprof_write_report: " << error.what() << "\n";
  return 1;
}
