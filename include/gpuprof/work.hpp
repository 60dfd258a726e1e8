// gpuprof/work.hpp: the work a scope declares (FLOPs, bytes, tokens), which
// reports turn into TFLOP/s, GB/s, tokens/s and arithmetic intensity.
#pragma once
#include "config.hpp"

GPUPROF_NAMESPACE_BEGIN

// Work done by one execution of a scope. Zero means "not declared".
struct Work {
  double flops = 0;   // floating-point operations (a multiply-add counts 2)
  double bytes = 0;   // bytes that must move through device memory
  double tokens = 0;  // tokens processed (for tokens/s)
};

GPUPROF_NAMESPACE_END
