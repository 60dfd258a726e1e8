// summation.hpp: the three ways the accumulation demo sums its addends,
// written once for the CPU (Eigen's half/bfloat16) and the GPU (__half,
// __nv_bfloat16): the arithmetic comes from an Ops type whose add/sub round
// to the accumulator's format on every call, and whose convert<Acc>(x)
// widens (or keeps) an addend in the accumulator's format.
//
// The pairwise (tree) order is fixed here too, because the CPU must repeat
// the GPU's order exactly for the two to agree bit for bit: kTreeWidth slots,
// the addends in the first n and zeros after them (adding +0 is exact), then
// slot[i] += slot[i + stride] for stride = kTreeWidth/2, ..., 1: what a
// shared-memory block reduction does.
#pragma once

#if defined(__CUDACC__)
#define PRECISION_HOST_DEVICE __host__ __device__
// The templates are instantiated for the device with device-only Ops; this
// stops nvcc from also checking a host instantiation that never runs.
#define PRECISION_NO_EXEC_CHECK _Pragma("nv_exec_check_disable")
#else
#define PRECISION_HOST_DEVICE
#define PRECISION_NO_EXEC_CHECK
#endif

namespace precision {

constexpr int kAddendCount = 1000;  // the course's 1000 additions of 0.01
constexpr int kTreeWidth = 1024;    // the next power of two: one block's reduction

// s = s + x, rounding s after every add.
PRECISION_NO_EXEC_CHECK
template <class Ops, class Acc, class Add>
PRECISION_HOST_DEVICE Acc sum_sequential(const Add* addends, int count) {
  Acc sum = Acc(0.0f);
  for (int i = 0; i < count; ++i) sum = Ops::add(sum, Ops::template convert<Acc>(addends[i]));
  return sum;
}

// Kahan's compensated sum: c carries the low-order bits each add loses, and
// the next addend is corrected by them. Needs add/sub that round exactly
// once and are never reassociated or fused, which Ops guarantees.
PRECISION_NO_EXEC_CHECK
template <class Ops, class Acc, class Add>
PRECISION_HOST_DEVICE Acc sum_kahan(const Add* addends, int count) {
  Acc sum = Acc(0.0f);
  Acc compensation = Acc(0.0f);
  for (int i = 0; i < count; ++i) {
    const Acc corrected = Ops::sub(Ops::template convert<Acc>(addends[i]), compensation);
    const Acc next = Ops::add(sum, corrected);
    compensation = Ops::sub(Ops::sub(next, sum), corrected);
    sum = next;
  }
  return sum;
}

// One level of the tree: slot[i] += slot[i + stride]. The CPU loops over i,
// a GPU block gives each i to a thread.
PRECISION_NO_EXEC_CHECK
template <class Ops, class Acc>
PRECISION_HOST_DEVICE void tree_level(Acc* slots, int slot, int stride) {
  slots[slot] = Ops::add(slots[slot], slots[slot + stride]);
}

}  // namespace precision
