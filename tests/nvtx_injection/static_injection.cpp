// Links the NVTX recorder into a program. NVTX's loader looks for this
// symbol (it declares it weak, as null) after the NVTX_INJECTION64_PATH
// variable: defining it installs the recorder without a shared library.
#define NVTX_NO_IMPL  // types only: this file implements the tool side
#include "nvtx_recorder.hpp"

extern "C" {
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = &nvtx_recorder::initialize;
}
