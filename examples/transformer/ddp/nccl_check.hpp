// ddp/nccl_check.hpp: every NCCL call goes through DDP_NCCL_CHECK, which
// throws gpuprof::Error naming the call, NCCL's error string and its last
// error message (what NCCL logged about the cause), with file:line.
#pragma once
#include <string>

#include <nccl.h>

#include <gpuprof/error.hpp>

namespace transformer::ddp {

inline void check_nccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status == ncclSuccess) return;
  std::string message = std::string(call) + " failed: " + ncclGetErrorString(status);
  if (const char* last = ncclGetLastError(nullptr); last != nullptr && *last != '\0')
    message += std::string(" (") + last + ")";
  throw gpuprof::Error(message + " (" + file + ":" + std::to_string(line) + ")");
}

}  // namespace transformer::ddp

#define DDP_NCCL_CHECK(call) ::transformer::ddp::check_nccl((call), #call, __FILE__, __LINE__)
