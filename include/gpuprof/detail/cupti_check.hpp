// gpuprof/detail/cupti_check.hpp: every CUPTI call's result checked, with the
// call, CUPTI's own words for the error, file and line.
#pragma once
#include <cupti.h>

#include <string>

#include "../config.hpp"
#include "../error.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

inline std::string cupti_result_text(CUptiResult status) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS || text == nullptr)
    return "CUPTI error " + std::to_string(static_cast<int>(status));
  return text;
}

// "cuptiActivityFlushAll(...) failed: CUPTI_ERROR_...: <text> (file:line)", or "" on success.
inline std::string cupti_failure(CUptiResult status, const char* call, const char* file, int line) {
  if (status == CUPTI_SUCCESS) return {};
  return std::string(call) + " failed: " + cupti_result_text(status) + " (" + file + ":" +
         std::to_string(line) + ")";
}

inline void check_cupti(CUptiResult status, const char* call, const char* file, int line) {
  if (status != CUPTI_SUCCESS)
    throw_error(std::string(call) + " failed: " + cupti_result_text(status), file, line);
}

}  // namespace detail
GPUPROF_NAMESPACE_END

// Throws gpuprof::Error naming the call when it does not return CUPTI_SUCCESS.
#define GPUPROF_CUPTI_CHECK(call) ::gpuprof::detail::check_cupti((call), #call, __FILE__, __LINE__)
// The failure message of a call as a string ("" on success), for code that must not throw.
#define GPUPROF_CUPTI_FAILURE(call) ::gpuprof::detail::cupti_failure((call), #call, __FILE__, __LINE__)
