// accumulation_gpu.cu: the accumulation demo on the device. One block per
// case: thread 0 runs the sequential and Kahan sums (they are serial by
// nature), and the whole block runs the tree, one slot pair per thread per
// level, in exactly the order of the CPU's sum_pairwise.
#include <cuda_runtime_api.h>

#include <gpuprof/scope.hpp>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/kernel_image.hpp"
#include "cuda/device_arithmetic.cuh"
#include "gpu.hpp"
#include "summation.hpp"

namespace precision {
namespace {

using examples::DeviceBuffer;

// What one case's kernel reports, each value widened exactly to fp32.
struct CaseOutput {
  float addend, sequential, kahan, pairwise, epsilon, nearest_total;
};

constexpr int kTreeThreads = kTreeWidth / 2;

template <class Acc, class Add>
__global__ void accumulate_kernel(AddendConversion conversion, CaseOutput* output) {
  __shared__ Add stored[kAddendCount];
  __shared__ Acc widened[kAddendCount];
  __shared__ Acc slots[kTreeWidth];
  const int thread = static_cast<int>(threadIdx.x);

  const Add addend = device::from_float<Add>(0.01f);  // through fp32, as on the CPU
  for (int i = thread; i < kAddendCount; i += kTreeThreads) {
    stored[i] = addend;
    widened[i] = DeviceOps::convert<Acc>(addend);
  }
  for (int slot = thread; slot < kTreeWidth; slot += kTreeThreads)
    slots[slot] = slot < kAddendCount ? DeviceOps::convert<Acc>(addend) : Acc(0.0f);
  __syncthreads();

  for (int stride = kTreeWidth / 2; stride >= 1; stride /= 2) {
    if (thread < stride) tree_level<DeviceOps>(slots, thread, stride);
    __syncthreads();
  }

  if (thread == 0) {
    const bool up_front = conversion == AddendConversion::once_up_front;
    const Acc sequential = up_front ? sum_sequential<DeviceOps, Acc>(widened, kAddendCount)
                                    : sum_sequential<DeviceOps, Acc>(stored, kAddendCount);
    const Acc kahan = up_front ? sum_kahan<DeviceOps, Acc>(widened, kAddendCount)
                               : sum_kahan<DeviceOps, Acc>(stored, kAddendCount);
    const float addend_value = device::to_float(addend);
    // The product of a ≤ 24-bit addend and 1000 rounds once in fp32, then
    // once more into Acc: the same two steps as the CPU's nearest_total.
    const float total = __fmul_rn(static_cast<float>(kAddendCount), addend_value);
    *output = {addend_value,
               device::to_float(sequential),
               device::to_float(kahan),
               device::to_float(slots[0]),
               device::epsilon<Acc>(),
               device::to_float(device::from_float<Acc>(total))};
  }
}

template <class Acc, class Add>
AccumulationRow accumulate_case(AddendConversion conversion) {
  DeviceBuffer<CaseOutput> output(1);
  accumulate_kernel<Acc, Add><<<1, kTreeThreads>>>(conversion, output.data());
  EXAMPLE_LAUNCH_CHECK();
  const CaseOutput result = output.to_host().front();

  AccumulationRow row;
  row.accumulator = dtype_name<Acc>();
  row.addend = dtype_name<Add>();
  if (conversion == AddendConversion::once_up_front) row.addend += std::string("→") + dtype_name<Acc>();
  row.addend_value = result.addend;
  row.sequential = result.sequential;
  row.kahan = result.kahan;
  row.pairwise = result.pairwise;
  row.nearest_total = result.nearest_total;
  row.accumulator_epsilon = result.epsilon;
  return row;
}

}  // namespace

std::optional<std::string> missing_device_code() { return examples::device_code_unavailable(); }

std::vector<AccumulationRow> accumulate_on_gpu() {
  GPUPROF_SCOPE("accumulation on GPU");
  return {
      accumulate_case<float, float>(AddendConversion::per_add),
      accumulate_case<__half, __half>(AddendConversion::per_add),
      accumulate_case<float, __half>(AddendConversion::per_add),
      accumulate_case<float, __half>(AddendConversion::once_up_front),
      accumulate_case<__nv_bfloat16, __nv_bfloat16>(AddendConversion::per_add),
      accumulate_case<float, __nv_bfloat16>(AddendConversion::per_add),
  };
}

}  // namespace precision
