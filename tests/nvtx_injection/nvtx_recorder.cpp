// The injection side of NVTX's tool interface (nvtxDetail/nvtxTypes.h):
// InitializeInjectionNvtx2 receives nvtxGetExportTable, asks it for the
// callbacks table and overwrites the CORE2 module's slots for domain create,
// register-string, range push and pop. Handles we return are pointers to our
// own strings, so a push can be mapped back to its text and domain.
#define NVTX_NO_IMPL  // types only: this file implements the tool side
#include "nvtx_recorder.hpp"

#include <deque>
#include <mutex>

namespace nvtx_recorder {
namespace {

struct State {
  std::mutex mutex;
  std::deque<std::string> owned_strings;  // domain names and registered strings
  std::vector<RangeEvent> recorded;
  bool initialized = false;
};
// Created on first use, whatever the order of static initializers, and
// never destroyed: ranges may be pushed, and the events read, while static
// destructors run.
State& state() {
  static State* const instance = new State;
  return *instance;
}

const std::string& own(const char* text) { return state().owned_strings.emplace_back(text ? text : ""); }
std::string domain_name(nvtxDomainHandle_t domain) {
  return domain ? *reinterpret_cast<const std::string*>(domain) : std::string();
}

nvtxDomainHandle_t NVTX_API domain_create(const char* name) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  return reinterpret_cast<nvtxDomainHandle_t>(const_cast<std::string*>(&own(name)));
}

nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t, const char* text) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  return reinterpret_cast<nvtxStringHandle_t>(const_cast<std::string*>(&own(text)));
}

int NVTX_API range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  RangeEvent event{RangeEvent::Kind::push,    domain_name(domain), "", false, false, 0,
                   std::this_thread::get_id()};
  if (attributes) {
    event.argb = attributes->colorType == NVTX_COLOR_ARGB;
    event.colour = attributes->color;
    if (attributes->messageType == NVTX_MESSAGE_TYPE_REGISTERED) {
      event.registered = true;
      event.message = *reinterpret_cast<const std::string*>(attributes->message.registered);
    } else if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII) {
      event.message = attributes->message.ascii;
    }
  }
  state().recorded.push_back(event);
  return 0;
}

int NVTX_API range_pop(nvtxDomainHandle_t domain) {
  const std::lock_guard<std::mutex> lock(state().mutex);
  state().recorded.push_back(
      {RangeEvent::Kind::pop, domain_name(domain), "", false, false, 0, std::this_thread::get_id()});
  return 0;
}

template <class Function>
void install(NvtxFunctionTable table, unsigned int size, unsigned int slot, Function function) {
  if (slot < size && table[slot]) *table[slot] = reinterpret_cast<NvtxFunctionPointer>(function);
}

}  // namespace

int NVTX_API initialize(NvtxGetExportTableFunc_t get_export_table) {
  const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) || !table) return 0;
  install(table, size, NVTX_CBID_CORE2_DomainCreateA, &domain_create);
  install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, &register_string);
  install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, &range_push);
  install(table, size, NVTX_CBID_CORE2_DomainRangePop, &range_pop);
  const std::lock_guard<std::mutex> lock(state().mutex);
  state().initialized = true;
  return 1;
}

bool attached() {
  const std::lock_guard<std::mutex> lock(state().mutex);
  return state().initialized;
}
std::vector<RangeEvent> events() {
  const std::lock_guard<std::mutex> lock(state().mutex);
  return state().recorded;
}
void clear() {
  const std::lock_guard<std::mutex> lock(state().mutex);
  state().recorded.clear();
}

}  // namespace nvtx_recorder
