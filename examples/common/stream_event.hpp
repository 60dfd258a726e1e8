// common/stream_event.hpp: owning CUDA streams and ordering events, for the
// examples that run work on more than one stream (the CUDA backend's
// optimizer stream, data parallelism's communication stream).
#pragma once
#include <cuda_runtime_api.h>

#include <utility>

#include <gpuprof/error.hpp>

namespace examples {

// Which end of the device's priority range a stream takes.
enum class StreamPriority { highest, lowest };

class Stream {
 public:
  explicit Stream(StreamPriority priority) {
    int lowest = 0, highest = 0;
    GPUPROF_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&lowest, &highest));
    GPUPROF_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking,
                                                    priority == StreamPriority::highest ? highest : lowest));
  }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event that only orders streams: no timing, which makes it cheaper to record.
class OrderingEvent {
 public:
  OrderingEvent() { GPUPROF_CUDA_CHECK(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming)); }
  ~OrderingEvent() {
    if (event_) cudaEventDestroy(event_);
  }
  OrderingEvent(OrderingEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  OrderingEvent(const OrderingEvent&) = delete;
  OrderingEvent& operator=(const OrderingEvent&) = delete;
  OrderingEvent& operator=(OrderingEvent&&) = delete;
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace examples
