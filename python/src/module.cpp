// python/src/module.cpp: the extension module gpuprof._gpuprof.
#include "bindings.hpp"

#include <gpuprof/config.hpp>
#include <gpuprof/error.hpp>

PYBIND11_MODULE(_gpuprof, m) {
  m.doc() = "gpuprof: scopes, benchmarks, kernel capture and reports for CUDA code (see docs/python.md)";
  m.attr("__version__") = std::to_string(GPUPROF_VERSION_MAJOR) + "." +
                          std::to_string(GPUPROF_VERSION_MINOR) + "." + std::to_string(GPUPROF_VERSION_PATCH);
  m.attr("with_cuda") = bool(GPUPROF_WITH_CUDA);
  m.attr("with_cupti") = bool(GPUPROF_WITH_CUPTI);
  // gpuprof::Error (bad options, unwritable paths, CUDA failures) reaches
  // Python as gpuprof.Error, a RuntimeError.
  pybind11::register_exception<gpuprof::Error>(m, "Error", PyExc_RuntimeError);
  gpuprof_python::bind_summary(m);
  gpuprof_python::bind_scopes(m);
  gpuprof_python::bind_reports(m);
  gpuprof_python::bind_bench(m);  // AbResult holds a Comparison
  gpuprof_python::bind_captures(m);
#if GPUPROF_WITH_CUPTI
  gpuprof_python::bind_cupti_loader(m);
#endif
}
