// gpuprof/cuda_events.hpp: CUDA-event timing without per-measurement setup.
//
// Creating an event costs a driver call and synchronizing one stalls the host,
// so neither may happen per scope: pairs come from an EventPool that only
// grows when every pair it owns is still in flight, and a pair is read back
// (cudaEventElapsedTime) once it has completed. Events are created with
// cudaEventDefault: timing on, the host spins rather than sleeps.
//
// gpuprof::Stream names a CUDA stream even in builds without the toolkit
// (it is the very type cudaStream_t aliases), so signatures stay the same.
#pragma once
#include <cstddef>
#include <vector>

#include "config.hpp"
#include "error.hpp"

struct CUstream_st;

GPUPROF_NAMESPACE_BEGIN

using Stream = CUstream_st*;  // == cudaStream_t; nullptr is the default stream

#if GPUPROF_WITH_CUDA

struct EventPair {
  cudaEvent_t begin = nullptr;
  cudaEvent_t end = nullptr;

  void record_begin(Stream stream) const { GPUPROF_CUDA_CHECK(cudaEventRecord(begin, stream)); }
  void record_end(Stream stream) const { GPUPROF_CUDA_CHECK(cudaEventRecord(end, stream)); }
  // Whether the end record has completed, and so the begin record before it
  // on the same stream. Polled with cudaEventQuery, whose cudaErrorNotReady
  // is a status: compute-sanitizer reports it from cudaEventElapsedTime as
  // an API error.
  bool completed() const {
    const cudaError_t status = cudaEventQuery(end);
    if (status == cudaErrorNotReady) return false;
    GPUPROF_CUDA_CHECK(status);
    return true;
  }
  // Milliseconds between the two records; both must have completed.
  float elapsed_ms() const {
    float milliseconds = 0;
    GPUPROF_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, begin, end));
    return milliseconds;
  }
  // The same for a pair believed complete: false, and nothing read, when it
  // is still in flight after all.
  bool try_elapsed_ms(float& milliseconds) const {
    const cudaError_t status = cudaEventElapsedTime(&milliseconds, begin, end);
    if (status == cudaErrorNotReady) return false;
    GPUPROF_CUDA_CHECK(status);
    return true;
  }
};

namespace detail {
inline EventPair create_event_pair() {
  EventPair pair;
  GPUPROF_CUDA_CHECK(cudaEventCreateWithFlags(&pair.begin, cudaEventDefault));
  const cudaError_t status = cudaEventCreateWithFlags(&pair.end, cudaEventDefault);
  if (status != cudaSuccess) cudaEventDestroy(pair.begin);  // keep the first error
  GPUPROF_CUDA_CHECK(status);
  return pair;
}
inline void destroy_event_pair(EventPair& pair) noexcept {
  // Destruction errors (e.g. a runtime already torn down) leave nothing to fix.
  if (pair.begin) cudaEventDestroy(pair.begin);
  if (pair.end) cudaEventDestroy(pair.end);
  pair = {};
}
}  // namespace detail

// One pair owned for the lifetime of this object (bench's per-run pair).
class ScopedEventPair {
 public:
  ScopedEventPair() : pair_(detail::create_event_pair()) {}
  ~ScopedEventPair() { detail::destroy_event_pair(pair_); }
  ScopedEventPair(const ScopedEventPair&) = delete;
  ScopedEventPair& operator=(const ScopedEventPair&) = delete;
  const EventPair& operator*() const noexcept { return pair_; }
  const EventPair* operator->() const noexcept { return &pair_; }

 private:
  EventPair pair_;
};

// Free pairs for one thread (not thread-safe: each thread owns its pool).
// The pool never destroys its events: it lives as long as the process, and
// destroying events during static destruction races the runtime's own
// teardown.
class EventPool {
 public:
  explicit EventPool(std::size_t reserve = 64) { free_.reserve(reserve); }
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  bool has_free() const noexcept { return !free_.empty(); }
  // A free pair, creating one only when none is free. The free list keeps
  // room for every pair ever created, so release() never allocates (it runs
  // in scope destructors).
  EventPair acquire() {
    if (free_.empty()) {
      if (free_.capacity() < created_ + 1) free_.reserve(2 * created_ + 1);
      const EventPair pair = detail::create_event_pair();
      ++created_;
      return pair;
    }
    const EventPair pair = free_.back();
    free_.pop_back();
    return pair;
  }
  void release(const EventPair& pair) noexcept { free_.push_back(pair); }  // within the reserved room
  // Pairs ever created: stays flat once the pool covers the pairs in flight.
  std::size_t created() const noexcept { return created_; }

 private:
  std::vector<EventPair> free_;
  std::size_t created_ = 0;
};

#endif  // GPUPROF_WITH_CUDA

GPUPROF_NAMESPACE_END
