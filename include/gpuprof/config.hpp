// gpuprof/config.hpp: compile-time switches and the versioned namespace.
//
// The CMake targets and pkg-config files set the feature switches
// (gpuprof::gpuprof and gpuprof.pc set GPUPROF_WITH_CUDA and GPUPROF_WITH_NVTX
// when the toolkit is found, gpuprof::cupti and gpuprof-cupti.pc add
// GPUPROF_WITH_CUPTI). They are never guessed from __CUDACC__: a program's
// .cu files (nvcc) and .cpp files (g++) share the recorder, whose layout
// depends on GPUPROF_WITH_CUDA, so a switch guessed per compiler would give
// one program two layouts. nvcc without the switch gets a warning instead
// (docs/configuration.md). GPUPROF_DISABLE compiles every GPUPROF_* macro to
// nothing.
#pragma once

// nvcc compiling gpuprof with no word on CUDA: most likely a build that
// passed only -I<prefix>/include, which would time GPU code with the host
// clock. Said once per translation unit (the host pass: __CUDA_ARCH__ is
// unset there); defining GPUPROF_WITH_CUDA (0 or 1) silences it.
#if defined(__CUDACC__) && !defined(__CUDA_ARCH__) && !defined(GPUPROF_WITH_CUDA) && !defined(GPUPROF_DISABLE)
#warning \
    "gpuprof: compiled by nvcc without GPUPROF_WITH_CUDA: scopes will time with the host clock and push no NVTX ranges. Use `pkg-config --cflags --libs gpuprof` or CMake's gpuprof::gpuprof, or define GPUPROF_WITH_CUDA=1 (and link cudart); define GPUPROF_WITH_CUDA=0 to keep host timing and silence this."
#endif

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
