// gpuprof/config.hpp: compile-time switches and the versioned namespace.
//
// The CMake targets set the feature switches (gpuprof::gpuprof sets
// GPUPROF_WITH_CUDA and GPUPROF_WITH_NVTX when the toolkit is found,
// gpuprof::cupti adds GPUPROF_WITH_CUPTI). They are never guessed from
// __CUDACC__, so a plain g++ translation unit gets GPU timing too.
// GPUPROF_DISABLE compiles every GPUPROF_* macro to nothing.
#pragma once

#define GPUPROF_VERSION_MAJOR 0
#define GPUPROF_VERSION_MINOR 1
#define GPUPROF_VERSION_PATCH 0

#ifndef GPUPROF_WITH_CUDA
#define GPUPROF_WITH_CUDA 0
#endif
#ifndef GPUPROF_WITH_NVTX
#define GPUPROF_WITH_NVTX GPUPROF_WITH_CUDA
#endif
#ifndef GPUPROF_WITH_CUPTI
#define GPUPROF_WITH_CUPTI 0
#endif

// Everything public lives in gpuprof::v0 (inline), so two major versions of the
// header can sit in one program without ODR clashes.
#define GPUPROF_NAMESPACE_BEGIN \
  namespace gpuprof {           \
  inline namespace v0 {
#define GPUPROF_NAMESPACE_END \
  }                           \
  }

#define GPUPROF_DETAIL_CONCAT_IMPL(a, b) a##b
#define GPUPROF_DETAIL_CONCAT(a, b) GPUPROF_DETAIL_CONCAT_IMPL(a, b)

#if defined(__GNUC__) || defined(__clang__)
#define GPUPROF_DETAIL_NOINLINE __attribute__((noinline))
#else
#define GPUPROF_DETAIL_NOINLINE
#endif
