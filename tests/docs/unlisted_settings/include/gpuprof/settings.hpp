#pragma once
#ifndef GPUPROF_LISTED
#define GPUPROF_LISTED 0
#endif
#define GPUPROF_CHECKED(call) (call)  // function-like: the API, not a setting
#define GPUPROF_DETAIL_INTERNAL 1     // internal by name
inline const char* full_trace() { return std::getenv("GPUPROF_FULL_TRACE"); }
#if GPUPROF_UNLISTED_SWITCH
#endif
