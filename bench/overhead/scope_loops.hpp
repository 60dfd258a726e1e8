// The loops the overhead benchmark times, one per case. Each iteration ends
// with the same compiler barrier, so no loop can be folded away and the cases
// differ only by what they measure.
#pragma once

inline void compiler_barrier() { asm volatile("" ::: "memory"); }

// In disabled_scopes.cpp (compiled with GPUPROF_DISABLE).
void disabled_scope_loop(long iterations);
