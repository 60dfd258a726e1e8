// The "compiled out" case of the overhead benchmark: this file alone is built
// with GPUPROF_DISABLE, so its GPUPROF_SCOPE is nothing and the loop is the
// bare loop of the other cases.
#include "scope_loops.hpp"

#include <gpuprof/scope.hpp>

#ifndef GPUPROF_DISABLE
#error "disabled_scopes.cpp must be compiled with GPUPROF_DISABLE"
#endif

void disabled_scope_loop(long iterations) {
  for (long i = 0; i < iterations; ++i) {
    GPUPROF_SCOPE("overhead");
    compiler_barrier();
  }
}
