// gpuprof/kernel_capture_options.hpp: what a KernelCapture (cupti.hpp)
// records and how. Plain host code without CUPTI, so the capture's parts
// (detail/kernel_capture_*.hpp) read one definition of the choices.
#pragma once
#include <cstddef>

#include "config.hpp"
#include "kernel_names.hpp"

GPUPROF_NAMESPACE_BEGIN

struct KernelCaptureOptions {
  bool copies = true;  // MEMCPY and MEMSET records, category "memory"
  // DRIVER activity as well as RUNTIME: kernels that libraries launch through
  // the driver API (cuLaunchKernelEx) still find their scope. Costs one more
  // record per API call.
  bool driver_api = true;
  // Ties each launch to its scope in a CUPTI callback on the functions that
  // launch work (detail/cupti_launch_apis.hpp): the innermost scope open on
  // the launching thread and the call's start, read as the call enters. No
  // RUNTIME, DRIVER or EXTERNAL_CORRELATION records then: with those, CUPTI
  // handles every runtime and driver call, and eager PyTorch makes several
  // per kernel (cudaGetDevice, cudaGetLastError, ...), which made its small
  // model's train step about twice as slow on the H200; with the callbacks it
  // took +19 % instead of +47 %, every kernel still in its scope
  // (docs/kernel-capture.md). A CUPTI that refuses the callbacks gets the records.
  bool launch_callbacks = true;
  bool allocations = false;  // MEMORY2 records, for MemoryWatch (memory.hpp)
  // Size of each activity buffer handed to CUPTI. Bigger buffers mean fewer
  // hand-overs; records that find no buffer are dropped (and counted).
  std::size_t buffer_bytes = std::size_t{8} << 20;
  bool start = true;  // capture from construction (else call start())
  // Scopes captured into a graph while capturing add an event-record node at
  // their close once this many nodes were captured since the last one (0:
  // never), so that CUPTI's work at each launch overlaps the graph's
  // execution instead of preceding it (detail/kernel_capture_graph_split.hpp).
  // Set 0 for graphs instantiated for device launch, which take no event nodes.
  std::size_t graph_piece_nodes = 16;
  CategoryRules categories = CategoryRules::defaults();
};

GPUPROF_NAMESPACE_END
