// python/src/cupti_loader.cpp: libcupti opened at run time, on first use.
//
// The extension does not link libcupti: a missing CUPTI must turn kernel
// capture off with a reason, not make `import gpuprof` fail, and the CUPTI in
// use must be the one the process already has or the one PyTorch would load
// (one CUPTI per process). So this file defines every CUPTI function the
// headers call as a forwarder to the library that gpuprof._load_cupti opened
// (python/gpuprof/_cupti_search.py lists where to look). The linker's version
// script keeps these definitions local to the extension: nothing else in the
// process binds to them. Before a library is loaded each forwarder returns
// CUPTI_ERROR_NOT_INITIALIZED, which the headers report like any CUPTI error.
#include <dlfcn.h>
#include <link.h>

#include <cupti.h>

#include <mutex>
#include <string>
#include <vector>

#include <gpuprof/error.hpp>

#include "bindings.hpp"

namespace py = pybind11;

// name, parameter list, argument list: each CUPTI function the headers call.
// A function missing here leaves an undefined symbol, and the import fails.
#define GPUPROF_CUPTI_FUNCTIONS(X)                                                                          \
  X(cuptiActivityDisable, (CUpti_ActivityKind kind), (kind))                                                \
  X(cuptiActivityEnable, (CUpti_ActivityKind kind), (kind))                                                 \
  X(cuptiActivityFlushAll, (uint32_t flag), (flag))                                                         \
  X(cuptiActivityGetNextRecord, (uint8_t * buffer, size_t valid_bytes, CUpti_Activity * *record),           \
    (buffer, valid_bytes, record))                                                                          \
  X(cuptiActivityGetNumDroppedRecords, (CUcontext context, uint32_t stream_id, size_t * dropped),           \
    (context, stream_id, dropped))                                                                          \
  X(cuptiActivityPopExternalCorrelationId, (CUpti_ExternalCorrelationKind kind, uint64_t * last_id),        \
    (kind, last_id))                                                                                        \
  X(cuptiActivityPushExternalCorrelationId, (CUpti_ExternalCorrelationKind kind, uint64_t id), (kind, id))  \
  X(cuptiActivityRegisterCallbacks,                                                                         \
    (CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed),              \
    (requested, completed))                                                                                 \
  X(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc timestamp), (timestamp))           \
  X(cuptiActivitySetAttribute, (CUpti_ActivityAttribute attribute, size_t * size, void* value),             \
    (attribute, size, value))                                                                               \
  X(cuptiEnableCallback,                                                                                    \
    (uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, CUpti_CallbackId id), \
    (enable, subscriber, domain, id))                                                                       \
  X(cuptiGetCallbackName, (CUpti_CallbackDomain domain, CUpti_CallbackId id, const char** name),            \
    (domain, id, name))                                                                                     \
  X(cuptiGetGraphNodeId, (CUgraphNode node, uint64_t * id), (node, id))                                     \
  X(cuptiGetResultString, (CUptiResult result, const char** text), (result, text))                          \
  X(cuptiSubscribe_v2,                                                                                      \
    (CUpti_SubscriberHandle * subscriber, CUpti_CallbackFunc callback, void* userdata,                      \
     CUpti_SubscriberParams* params),                                                                       \
    (subscriber, callback, userdata, params))                                                               \
  X(cuptiUnsubscribe, (CUpti_SubscriberHandle subscriber), (subscriber))

namespace {

// The addresses in the loaded library; all null until one loaded completely.
struct CuptiFunctions {
#define GPUPROF_CUPTI_POINTER(name, params, args) decltype(&::name) name = nullptr;
  GPUPROF_CUPTI_FUNCTIONS(GPUPROF_CUPTI_POINTER)
#undef GPUPROF_CUPTI_POINTER
};
CuptiFunctions cupti_functions;

std::mutex load_mutex;
std::string loaded_path;  // guarded by load_mutex; set once, never unloaded

// The functions of `handle`, or the first one it lacks.
std::string resolve(void* handle, CuptiFunctions& out) {
#define GPUPROF_CUPTI_RESOLVE(name, params, args)                       \
  out.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (!out.name) return #name;
  GPUPROF_CUPTI_FUNCTIONS(GPUPROF_CUPTI_RESOLVE)
#undef GPUPROF_CUPTI_RESOLVE
  return {};
}

std::string file_of(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]) return map->l_name;
  return fallback;
}

// Opens the first candidate that loads and has every function; the path of
// the library in use. Throws gpuprof::Error listing each candidate's failure.
std::string load_cupti(const std::vector<std::string>& candidates) {
  const std::lock_guard<std::mutex> lock(load_mutex);
  if (!loaded_path.empty()) return loaded_path;
  std::string failures;
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      failures += "\n  " + candidate + ": " + (why ? why : "dlopen failed");
      continue;
    }
    CuptiFunctions found;
    const std::string missing = resolve(handle, found);
    if (!missing.empty()) {
      // Not closed: a CUPTI must never be unloaded, it may have hooked the driver.
      failures +=
          "\n  " + file_of(handle, candidate) + ": has no " + missing + " (a CUPTI older than the headers)";
      continue;
    }
    cupti_functions = found;
    loaded_path = file_of(handle, candidate);
    return loaded_path;
  }
  throw gpuprof::Error(
      "no usable " + std::string(GPUPROF_CUPTI_SONAME) + " (this gpuprof was built against CUDA " +
      std::to_string(CUDA_VERSION / 1000) + "." + std::to_string(CUDA_VERSION % 1000 / 10) +
      "'s CUPTI); tried:" + (failures.empty() ? std::string("\n  (no candidate)") : failures));
}

}  // namespace

#define GPUPROF_CUPTI_FORWARD(name, params, args)                  \
  extern "C" CUptiResult CUPTIAPI name params {                    \
    const auto function = cupti_functions.name;                    \
    return function ? function args : CUPTI_ERROR_NOT_INITIALIZED; \
  }
GPUPROF_CUPTI_FUNCTIONS(GPUPROF_CUPTI_FORWARD)
#undef GPUPROF_CUPTI_FORWARD

namespace gpuprof_python {

void bind_cupti_loader(py::module_& m) {
  m.attr("cupti_soname") = GPUPROF_CUPTI_SONAME;
  m.def(
      "_load_cupti", [](const std::vector<std::string>& candidates) { return load_cupti(candidates); },
      py::arg("candidates"),
      "Opens the first of `candidates` (paths or sonames) that is a complete CUPTI, once per process; "
      "returns the file in use. gpuprof.load_cupti() supplies the candidates.");
}

}  // namespace gpuprof_python
