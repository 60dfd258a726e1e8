// bench/backend_stream.hpp: the CUDA stream a backend enqueues on. CUDA
// events and scopes must be recorded there: the CUDA backend works on a
// non-blocking stream, which the default stream does not order with.
#pragma once
#include <gpuprof/cuda_events.hpp>

#include "backend.hpp"

namespace transformer::bench {

// nullptr: the default stream (and the CPU backend, which has none).
gpuprof::Stream backend_stream(const Backend& backend);
// False while Backend declares no stream(): then event times cannot be trusted
// and the driver times with the host clock.
bool backend_exposes_stream();

}  // namespace transformer::bench
