// python/src/bindings.hpp: the pieces of the extension gpuprof._gpuprof, each
// defined in its own file and registered by module.cpp.
#pragma once
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <gpuprof/cuda_events.hpp>
#include <gpuprof/report_model.hpp>
#include <gpuprof/stats.hpp>

namespace gpuprof_python {

void bind_summary(pybind11::module_& m);       // gpuprof.Summary (before the rest: they return it)
void bind_scopes(pybind11::module_& m);        // scope, Work, switches
void bind_bench(pybind11::module_& m);         // bench (axes too), write_bench_json, ab (after bind_reports)
void bind_reports(pybind11::module_& m);       // report, kernel summaries, compare
void bind_captures(pybind11::module_& m);      // KernelCapture, MemoryWatch
void bind_cupti_loader(pybind11::module_& m);  // _load_cupti, cupti_soname (CUPTI builds only)

// A Summary as a plain dict (for JSON), its samples included.
pybind11::dict summary_dict(const gpuprof::Summary& summary);

// profiler().report() (GIL released while it waits for the device), with
// adopt_by_launch_time() applied when asked.
gpuprof::Report take_report(bool adopt_other_threads);

// A stream argument: None (the current stream, see current_stream()), an
// integer handle, or anything with an integer `.cuda_stream` (torch.cuda.Stream).
gpuprof::Stream stream_of(const pybind11::handle& stream);
// The current stream: PyTorch's current stream on the current device when torch
// is imported and CUDA is initialised there, else the default stream.
gpuprof::Stream current_stream();

}  // namespace gpuprof_python
