// Scopes and bench on a real GPU: event timing of a kernel of known duration,
// the event pool's reuse, CUDA-graph replay and the L2 flush in bench, and
// scopes inside bench's graph capture (more in graph_timing_gpu_test.cu). Skipped (exit 77) without a device.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>

#include <cuda_runtime_api.h>

#include <gpuprof/bench.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

#include "gpu_scope_helpers.cuh"

using namespace scope_tests;

namespace {

__global__ void sum_kernel(const float* data, std::size_t count, float* out) {
  float sum = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x)
    sum += data[i];
  if (sum == -1.0f) *out = sum;  // keeps the loads; never true for our zeros
}

}  // namespace

TEST_CASE("a scope's CUDA-event time matches a 2 ms kernel") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  REQUIRE(profiler.timing_source() == gpuprof::TimingSource::cuda_events);
  profiler.reset();
  spin_kernel<<<1, 1, 0, owner.stream>>>(1000);  // loads the module outside the scopes
  check(cudaStreamSynchronize(owner.stream));
  // On an idle stream the first scope's begin event completes as soon as it is
  // recorded, so its time also holds the host's wait until the kernel's launch:
  // a descheduled host thread once made it 2.069 ms (1 run in 50). Queued
  // behind 0.5 ms of other work, every scope times its kernel alone, as the
  // later ones already do behind their predecessor (nvbench's blocking kernel).
  spin_kernel<<<1, 1, 0, owner.stream>>>(500'000);
  for (int i = 0; i < 5; ++i) {
    GPUPROF_SCOPE("spin", owner.stream);
    spin_kernel<<<1, 1, 0, owner.stream>>>(2'000'000);
    check(cudaGetLastError());
  }
  const auto report = profiler.report();
  const auto& spin = node_at(report, "spin");
  REQUIRE(spin.gpu_ms.n == 5);
  CHECK(report.timing_source == gpuprof::TimingSource::cuda_events);
  CHECK(!report.device_name.empty());
  CHECK(spin.gpu_ms.min >= 2.0);         // the timer guarantees at least 2 ms
  CHECK(spin.gpu_ms.max <= 2.0 * 1.03);  // and the events add microseconds, not more
  // The host does not wait for the kernel inside the scope: launches are async.
  CHECK(spin.host_ms.median < 1.0);
}

// Holds its stream until the host opens the gate (or 10 s pass): everything
// queued behind it is in flight at once, however fast the GPU would be.
__global__ void gate_kernel(const volatile int* open) {
  std::uint64_t start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (*open == 0 && now - start < 10'000'000'000ull);
}

// The pool's size is the largest number of pairs ever in flight at once. With
// free-running kernels that depends on how far the host gets ahead of the GPU
// (the first round, slower with its first-use work, set a lower peak than the
// later ones: 4 failures in 40 runs). Behind a gate every round has exactly
// its 2 x 40 pairs in flight, so the pool covers them after round one. It may
// take a few more: after meeting a pair in flight the read-back waits 100 us
// before asking again, and a round that starts within that wait takes new
// pairs (82 of 80 on an H200). A pool that kept pairs would grow by a
// round's 80 each round.
TEST_CASE("the event pool stops growing once pairs come back") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  int* gate = nullptr;
  check(cudaHostAlloc(reinterpret_cast<void**>(&gate), sizeof(int), cudaHostAllocMapped));
  constexpr int scopes_per_round = 40;  // 201 queued operations: far below the launch queue's depth
  const auto round = [&] {
    *reinterpret_cast<volatile int*>(gate) = 0;
    gate_kernel<<<1, 1, 0, owner.stream>>>(gate);
    for (int i = 0; i < scopes_per_round; ++i) {
      GPUPROF_SCOPE("outer", owner.stream);
      GPUPROF_SCOPE("inner", owner.stream);
      spin_kernel<<<1, 1, 0, owner.stream>>>(1000);
    }
    // Resolution met pairs still in flight (cudaErrorNotReady): not an error for the user.
    CHECK(cudaPeekAtLastError() == cudaSuccess);
    *reinterpret_cast<volatile int*>(gate) = 1;
    check(cudaStreamSynchronize(owner.stream));
  };
  round();
  profiler.report();
  const std::size_t created = gpuprof::detail::recorder().this_thread().events.created();
  CHECK(created >= 2 * scopes_per_round);  // the gate held them all in flight
  for (int r = 0; r < 5; ++r) {
    round();
    const auto report = profiler.report();
    CHECK(node_at(report, "outer/inner").gpu_ms.n == node_at(report, "outer/inner").count);
  }
  CHECK(gpuprof::detail::recorder().this_thread().events.created() < created + scopes_per_round);
  cudaFreeHost(gate);
}

TEST_CASE("bench with cuda_graph captures fn once and times graph launches") {
  StreamOwner owner;
  int calls = 0;
  gpuprof::BenchOptions options;
  options.cuda_graph = true;
  options.stream = owner.stream;
  options.warmup = 2;
  options.iters = 8;
  const auto result = gpuprof::bench(
      [&] {
        ++calls;
        for (int k = 0; k < 4; ++k) spin_kernel<<<1, 1, 0, owner.stream>>>(250'000);
      },
      options);
  CHECK(calls == 2);  // the cold call and the capture; launches replay the graph
  CHECK(result.timing_source == gpuprof::TimingSource::cuda_events);
  REQUIRE(result.gpu.n == 8);
  CHECK(result.gpu.min >= 1.0);  // four 0.25 ms kernels in sequence
  CHECK(result.gpu.max <= 1.0 * 1.05);
  CHECK(result.host.n == 8);
}

TEST_CASE("bench's L2 flush writes exactly the L2 size and makes cached reads slower") {
  int device = 0;
  check(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  check(cudaGetDeviceProperties(&properties, device));
  const gpuprof::detail::L2Flusher flusher;
  CHECK(flusher.bytes() == static_cast<std::size_t>(properties.l2CacheSize));

  // A buffer well inside L2: without a flush it stays cached between samples.
  StreamOwner owner;
  const std::size_t count = static_cast<std::size_t>(properties.l2CacheSize) / 4 / sizeof(float);
  float* data = nullptr;
  float* out = nullptr;
  check(cudaMalloc(&data, count * sizeof(float)));
  check(cudaMalloc(&out, sizeof(float)));
  check(cudaMemset(data, 0, count * sizeof(float)));
  const auto read_all = [&] {
    sum_kernel<<<properties.multiProcessorCount * 4, 256, 0, owner.stream>>>(data, count, out);
  };
  gpuprof::BenchOptions options;
  options.stream = owner.stream;
  options.iters = 30;
  const auto cached = gpuprof::bench(read_all, options);
  options.flush_l2 = true;
  const auto flushed = gpuprof::bench(read_all, options);
  cudaFree(data);
  cudaFree(out);
  INFO("cached: " << cached.summary());
  INFO("flushed: " << flushed.summary());
  CHECK(flushed.gpu.median > 1.1 * cached.gpu.median);
}

TEST_CASE("scopes in an eager bench count its samples only, GPU-timed") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  gpuprof::BenchOptions options;
  options.stream = owner.stream;
  options.warmup = 2;
  options.iters = 4;
  const auto result = gpuprof::bench(
      [&] {
        GPUPROF_SCOPE("eager", owner.stream);
        spin_kernel<<<1, 1, 0, owner.stream>>>(100'000);
      },
      options);
  const auto report = profiler.report();
  const auto& eager = node_at(report, "eager");
  CHECK(result.gpu.n == 4);
  CHECK(eager.count == 4);  // as many as bench's samples: the cold call and 2 warm-up calls are left out
  CHECK(eager.gpu_ms.n == 4);
  CHECK(report.warmup_instances_left_out == 1 + 2);
}

TEST_CASE("scopes inside bench's graph capture are timed on every replay") {
  StreamOwner owner;
  auto& profiler = gpuprof::profiler();
  profiler.reset();
  int calls = 0;
  gpuprof::BenchOptions options;
  options.cuda_graph = true;
  options.stream = owner.stream;
  options.warmup = 2;
  options.iters = 3;
  gpuprof::bench(
      [&] {
        ++calls;
        GPUPROF_SCOPE("captured", owner.stream);
        spin_kernel<<<1, 1, 0, owner.stream>>>(100'000);
      },
      options);
  const auto report = profiler.report();
  const auto& captured = node_at(report, "captured");
  CHECK(calls == 2);  // the cold call and the capture
  // The 3 timed replays; the cold call and the 2 warm-up replays are left
  // out and counted apart (the replays read by the warm-up's end are its
  // own, whatever their GPU time stamps map to on the host clock); the
  // capture is no instance.
  CHECK(captured.count == 3);
  CHECK(report.warmup_instances_left_out == 1 + 2);
  CHECK(captured.gpu_ms.n == captured.count);
  CHECK(captured.gpu_ms.min >= 0.1);
  // Every instance is a replay, which holds only the kernel.
  for (const auto& instance : report.instances)
    if (report.nodes[static_cast<std::size_t>(instance.node)].path == "captured")
      CHECK(instance.gpu_ms <= 0.1 * 1.05 + 0.02);
  CHECK(report.timing_note.empty());
}
