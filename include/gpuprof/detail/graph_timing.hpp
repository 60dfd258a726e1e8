// gpuprof/detail/graph_timing.hpp: GPU time of scopes captured into CUDA graphs,
// for every replay of the instantiated graph.
//
// A scope entered on a capturing stream adds a begin and an end stamp kernel
// (%globaltimer) to the graph; each replay writes tagged words into a ring in
// mapped host memory, read lazily by the host with no CUDA call; replays
// overwritten before they were read are counted lost. While a KernelCapture
// captures, none of this runs (detail/graph_intervals.hpp). The layout, the
// measured costs and why stamps and not event nodes:
// docs/internals.md#scopes-in-cuda-graphs-stamp-kernels-detailgraph_timinghpp
#pragma once
#include "../config.hpp"

#if GPUPROF_WITH_CUDA
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "../clock.hpp"
#include "../cuda_events.hpp"
#include "../error.hpp"
#include "graph_intervals.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// Replays kept per captured scope instance before the oldest unread one is
// overwritten (a power of two: the stamp computes replay & (ring - 1)).
inline constexpr std::uint64_t graph_replay_ring = 256;

// One replay: three words of (tag << 40 | 40-bit value).
struct GraphReplaySlot {
  std::uint64_t begin_low;
  std::uint64_t begin_high;
  std::uint64_t duration;  // graph_duration_overlapped / _too_long: not a time
  std::uint64_t unused;
};
inline constexpr std::uint64_t graph_value_mask = (std::uint64_t{1} << 40) - 1;
inline constexpr std::uint64_t graph_tag_mask = (std::uint64_t{1} << 24) - 1;
inline constexpr std::uint64_t graph_duration_overlapped = graph_value_mask;
inline constexpr std::uint64_t graph_duration_too_long = graph_value_mask - 1;

// Host side of a site, mapped into the device's address space.
struct GraphSiteHost {
  std::uint64_t clock_probe_ns;  // the clock probe's %globaltimer (the probe site's only)
  std::uint64_t replays;         // a mirror of the device count, written without ordering
  std::uint64_t header_padding[6];
  GraphReplaySlot ring[graph_replay_ring];
};
// Device side of a site: only the stamps touch it.
struct GraphSiteDevice {
  std::uint64_t replays;     // replays numbered so far
  std::uint64_t begin_ns;    // of the replay in progress
  std::uint32_t open;        // begin stamps minus end stamps
  std::uint32_t overlapped;  // a begin stamp found another replay open
};

inline constexpr char graph_stamp_ptx[] = R"PTX(
.version 7.0
.target sm_52
.address_size 64

.visible .entry gpuprof_graph_stamp_begin(.param .u64 device_site, .param .u64 host_site)
{
  .reg .u64 %rd<4>;
  .reg .u32 %r<2>;
  .reg .pred %p;
  ld.param.u64 %rd1, [device_site];
  atom.add.u32 %r1, [%rd1+16], 1;
  setp.ne.u32 %p, %r1, 0;
  @%p st.volatile.u32 [%rd1+20], 1;
  mov.u64 %rd3, %globaltimer;
  st.volatile.u64 [%rd1+8], %rd3;
  ret;
}

.visible .entry gpuprof_graph_stamp_end(.param .u64 device_site, .param .u64 host_site)
{
  .reg .u64 %rd<16>;
  .reg .u32 %r<4>;
  .reg .pred %p<4>;
  mov.u64 %rd3, %globaltimer;
  ld.param.u64 %rd1, [device_site];
  ld.param.u64 %rd2, [host_site];
  ld.volatile.u64 %rd4, [%rd1+8];
  atom.add.u32 %r1, [%rd1+16], -1;
  ld.volatile.u32 %r2, [%rd1+20];
  atom.add.u64 %rd5, [%rd1], 1;
  sub.u64 %rd6, %rd3, %rd4;
  min.u64 %rd6, %rd6, 1099511627774;
  setp.ne.u32 %p1, %r1, 1;
  setp.ne.u32 %p2, %r2, 0;
  or.pred %p3, %p1, %p2;
  @%p3 mov.u64 %rd6, 1099511627775;
  @!%p1 st.volatile.u32 [%rd1+20], 0;
  add.u64 %rd7, %rd5, 1;
  and.b64 %rd8, %rd7, 16777215;
  shl.b64 %rd8, %rd8, 40;
  and.b64 %rd9, %rd4, 1099511627775;
  or.b64 %rd9, %rd9, %rd8;
  shr.u64 %rd10, %rd4, 40;
  or.b64 %rd10, %rd10, %rd8;
  or.b64 %rd11, %rd6, %rd8;
  and.b64 %rd12, %rd5, 255;
  shl.b64 %rd12, %rd12, 5;
  add.u64 %rd12, %rd12, %rd2;
  st.volatile.u64 [%rd12+64], %rd9;
  st.volatile.u64 [%rd12+72], %rd10;
  st.volatile.u64 [%rd12+80], %rd11;
  st.volatile.u64 [%rd2+8], %rd7;
  ret;
}

.visible .entry gpuprof_graph_stamp_clear(.param .u64 words, .param .u64 count)
{
  .reg .u64 %rd<5>;
  .reg .u32 %r<2>;
  .reg .pred %p;
  ld.param.u64 %rd1, [words];
  ld.param.u64 %rd2, [count];
  mov.u32 %r1, %tid.x;
  cvt.u64.u32 %rd3, %r1;
  setp.ge.u64 %p, %rd3, %rd2;
  @%p ret;
  shl.b64 %rd3, %rd3, 3;
  add.u64 %rd4, %rd1, %rd3;
  mov.u64 %rd3, 0;
  st.u64 [%rd4], %rd3;
  ret;
}

.visible .entry gpuprof_graph_stamp_clock(.param .u64 host_word)
{
  .reg .u64 %rd<3>;
  ld.param.u64 %rd1, [host_word];
  mov.u64 %rd2, %globaltimer;
  st.volatile.u64 [%rd1], %rd2;
  ret;
}
)PTX";
static_assert(graph_replay_ring == 256 && sizeof(GraphReplaySlot) == 32 &&
                  offsetof(GraphSiteHost, replays) == 8 && offsetof(GraphSiteHost, ring) == 64 &&
                  offsetof(GraphSiteDevice, open) == 16 && offsetof(GraphSiteDevice, overlapped) == 20 &&
                  graph_value_mask == 1099511627775u,
              "the PTX above hard-codes the ring size, the masks and these offsets");

// One scope instance captured into a graph.
struct GraphSite {
  GraphSiteHost* host = nullptr;       // as the device addresses it (the stamps' argument)
  GraphSiteHost* host_view = nullptr;  // the same memory, as the host addresses it
  GraphSiteDevice* device = nullptr;
  std::uint32_t node = 0;          // global node id
  std::uint32_t thread = 0;        // the capturing thread's dense id
  std::uint64_t next_replay = 0;   // the first replay not read yet
  std::atomic<bool> armed{false};  // its end stamp is in the graph: replays can be read
};

// One replay of one captured scope instance.
struct GraphSample {
  std::uint64_t id;
  std::uint32_t node;
  std::uint32_t thread;
  std::int64_t begin_gpu_ns;  // %globaltimer
  std::int64_t end_gpu_ns;
};

// Makes potentially unsafe CUDA calls (allocation, module loading) legal on
// this thread while one of its streams is being captured: the documented way
// for a library to allocate during a capture it does not own.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { GPUPROF_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode_)); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

class GraphTimings {
 public:
  explicit GraphTimings(std::atomic<std::uint64_t>& instance_ids) : instance_ids_(instance_ids) {}
  GraphTimings(const GraphTimings&) = delete;
  GraphTimings& operator=(const GraphTimings&) = delete;

  // Scope entry on a capturing stream: a site, and its begin stamp in the graph.
  GraphSite* begin(Stream stream, std::uint32_t node, std::uint32_t thread) {
    GraphSite* site = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      site = new_site();
      site->node = node;
      site->thread = thread;
    }
    launch(begin_kernel_, site, stream);  // on failure the site stays unarmed, never read
    return site;
  }
  // Scope exit: the end stamp. Never throws; says why when the stamp could not
  // be added (the site then stays unarmed and its replays are not read).
  const char* end(GraphSite* site, Stream stream) noexcept {
    // A scope that outlived its capture would launch its end stamp eagerly.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusActive)
      return "a scope opened inside a CUDA graph capture closed after the capture ended";
    void* args[] = {&site->device, &site->host};
    const cudaError_t status =
        cudaLaunchKernel(reinterpret_cast<const void*>(end_kernel_), dim3(1), dim3(1), args, 0, stream);
    if (status != cudaSuccess) return cudaGetErrorName(status);
    site->armed.store(true, std::memory_order_release);
    return nullptr;
  }

  // Scope entry on a capturing stream while a GraphIntervalSource times
  // captured scopes: no stamp, only the note. Kept for good, as sites are:
  // the graph may be replayed after any number of resets.
  void note_unstamped(const CapturedScope& scope) {
    const std::lock_guard<std::mutex> lock(mutex_);
    unstamped_.push_back(scope);
  }
  std::vector<CapturedScope> unstamped() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return unstamped_;
  }
  // Replays of unstamped scopes that a KernelCapture derived as it stopped:
  // until the next reset(), every report() includes them. (A stop() on one
  // thread racing a reset() on another may keep replays from before it.)
  void keep_derived(const std::vector<GraphInterval>& intervals) {
    const std::lock_guard<std::mutex> lock(mutex_);
    add_new_intervals(kept_derived_, intervals);
  }
  std::vector<GraphInterval> kept_derived() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return kept_derived_;
  }

  // Reads every completed replay not read yet. Cheap (host loads only).
  void poll() {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (GraphSite& site : sites_)
      if (site.armed.load(std::memory_order_acquire)) read(site);
  }
  // A graph was launched: reads the rings every ring / 4 launches, so that
  // launches made through gpuprof::launch_graph lose no replay.
  void note_launch() {
    if (launches_.fetch_add(1, std::memory_order_relaxed) % (graph_replay_ring / 4) == 0) poll();
  }
  // How many replays were read since the last reset, after reading every one
  // completed now: samples()[i] for i below it completed before this call.
  std::size_t replays_read() {
    poll();
    const std::lock_guard<std::mutex> lock(mutex_);
    return samples_.size();
  }
  // Everything read since the last reset (after reading what is there now).
  std::vector<GraphSample> samples() {
    poll();
    const std::lock_guard<std::mutex> lock(mutex_);
    return samples_;
  }
  struct Losses {
    std::uint64_t overwritten = 0;  // not read before ring later replays overwrote them
    std::uint64_t overlapped = 0;   // the graph ran concurrently with itself
    std::uint64_t too_long = 0;     // longer than the 40-bit duration field (18 minutes)
  };
  Losses losses() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return losses_;
  }
  // Forgets what was read; replays that completed before are read (and dropped) first.
  void reset() {
    poll();
    const std::lock_guard<std::mutex> lock(mutex_);
    samples_.clear();
    kept_derived_.clear();
    losses_ = {};
  }
  // Pinned host bytes held for graph timing: grows with captured scope
  // instances, never with replays.
  std::size_t pinned_bytes() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return slabs_.size() * sites_per_slab * sizeof(GraphSiteHost);
  }
  std::size_t sites() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return sites_.size();
  }

  // Steady-clock ns minus %globaltimer ns, measured now with one tiny kernel
  // and one synchronisation of a private stream (report() time only). The
  // kernel stores the reading in the probe site's mapped host memory, which
  // the host reads once the stream is synchronized: no copy back.
  std::int64_t host_minus_gpu_ns() {
    const std::lock_guard<std::mutex> lock(mutex_);
    const RelaxedCaptureMode relaxed;
    load_kernels();
    std::uint64_t* reading = &probe_->host->clock_probe_ns;  // as the device addresses it
    void* args[] = {&reading};
    const std::int64_t before = host_now_ns();
    GPUPROF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(clock_kernel_), dim3(1), dim3(1), args,
                                        0, private_stream_));
    GPUPROF_CUDA_CHECK(cudaStreamSynchronize(private_stream_));
    const std::int64_t after = host_now_ns();
    const std::uint64_t gpu_now = *static_cast<volatile std::uint64_t*>(&probe_->host_view->clock_probe_ns);
    return (before + after) / 2 - static_cast<std::int64_t>(gpu_now);
  }

 private:
  static constexpr std::size_t sites_per_slab = 32;
  static constexpr std::size_t slab_device_words = sites_per_slab * sizeof(GraphSiteDevice) / 8;
  static_assert(
      sizeof(GraphSiteDevice) % 8 == 0 && slab_device_words <= 1024,
      "gpuprof_graph_stamp_clear zeroes a slab's device side with one block, a thread per 64-bit word");

  void load_kernels() {
    if (library_) return;
    GPUPROF_CUDA_CHECK(cudaStreamCreateWithFlags(&private_stream_, cudaStreamNonBlocking));
    GPUPROF_CUDA_CHECK(
        cudaLibraryLoadData(&library_, graph_stamp_ptx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    GPUPROF_CUDA_CHECK(cudaLibraryGetKernel(&begin_kernel_, library_, "gpuprof_graph_stamp_begin"));
    GPUPROF_CUDA_CHECK(cudaLibraryGetKernel(&end_kernel_, library_, "gpuprof_graph_stamp_end"));
    GPUPROF_CUDA_CHECK(cudaLibraryGetKernel(&clear_kernel_, library_, "gpuprof_graph_stamp_clear"));
    GPUPROF_CUDA_CHECK(cudaLibraryGetKernel(&clock_kernel_, library_, "gpuprof_graph_stamp_clock"));
    probe_ = new_site();
  }
  static void launch(cudaKernel_t kernel, GraphSite* site, Stream stream) {
    void* args[] = {&site->device, &site->host};
    GPUPROF_CUDA_CHECK(
        cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(1), dim3(1), args, 0, stream));
  }

  // Under mutex_. Sites are never freed: a graph (or an instance of it made
  // before the graph was destroyed) may still write into one.
  GraphSite* new_site() {
    const RelaxedCaptureMode relaxed;
    load_kernels();
    if (free_in_slab_ == 0) {
      Slab slab;
      GPUPROF_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&slab.host),
                                       sites_per_slab * sizeof(GraphSiteHost),
                                       cudaHostAllocMapped | cudaHostAllocPortable));
      std::memset(slab.host, 0, sites_per_slab * sizeof(GraphSiteHost));
      const cudaError_t status =
          cudaMalloc(reinterpret_cast<void**>(&slab.device), sites_per_slab * sizeof(GraphSiteDevice));
      if (status != cudaSuccess) cudaFreeHost(slab.host);
      GPUPROF_CUDA_CHECK(status);
      // Zeroed by a stamp-family kernel, one thread per word (a memset would be
      // a record of gpuprof's in the user's kernel capture; see the file comment).
      void* words = slab.device;
      std::uint64_t count = slab_device_words;
      void* args[] = {&words, &count};
      GPUPROF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(clear_kernel_), dim3(1),
                                          dim3(static_cast<unsigned>(slab_device_words)), args, 0,
                                          private_stream_));
      GPUPROF_CUDA_CHECK(cudaStreamSynchronize(private_stream_));
      GPUPROF_CUDA_CHECK(
          cudaHostGetDevicePointer(reinterpret_cast<void**>(&slab.host_on_device), slab.host, 0));
      slabs_.push_back(slab);
      free_in_slab_ = sites_per_slab;
    }
    const Slab& slab = slabs_.back();
    const std::size_t index = sites_per_slab - free_in_slab_;
    GraphSite& site = sites_.emplace_back();
    --free_in_slab_;
    site.host = slab.host_on_device + index;
    site.host_view = slab.host + index;
    site.device = slab.device + index;
    return &site;
  }

  // Under mutex_: every complete, unread replay of `site`.
  void read(GraphSite& site) {
    const volatile GraphSiteHost& host = *site.host_view;
    const std::uint64_t replays = host.replays;
    for (;;) {
      std::uint64_t replay = site.next_replay;
      if (replays > replay + graph_replay_ring) {  // its slot was rewritten by replay + ring
        losses_.overwritten += replays - graph_replay_ring - replay;
        replay = site.next_replay = replays - graph_replay_ring;
      }
      const volatile GraphReplaySlot& slot = host.ring[replay % graph_replay_ring];
      const std::uint64_t begin_low = slot.begin_low, begin_high = slot.begin_high, duration = slot.duration;
      const std::uint64_t tag = (replay + 1) & graph_tag_mask;
      // Not written yet, or mid-way through being rewritten by a later
      // replay (the next read's replay count will say so).
      if ((begin_low >> 40) != tag || (begin_high >> 40) != tag || (duration >> 40) != tag) return;
      site.next_replay = replay + 1;
      const std::uint64_t nanoseconds = duration & graph_value_mask;
      if (nanoseconds == graph_duration_overlapped) {
        ++losses_.overlapped;
      } else if (nanoseconds == graph_duration_too_long) {
        ++losses_.too_long;
      } else {
        const auto begin = static_cast<std::int64_t>(((begin_high & graph_value_mask) << 40) |
                                                     (begin_low & graph_value_mask));
        samples_.push_back({instance_ids_.fetch_add(1, std::memory_order_relaxed), site.node, site.thread,
                            begin, begin + static_cast<std::int64_t>(nanoseconds)});
      }
    }
  }

  struct Slab {
    GraphSiteHost* host = nullptr;            // host address
    GraphSiteHost* host_on_device = nullptr;  // the same memory, as the device sees it
    GraphSiteDevice* device = nullptr;
  };

  std::atomic<std::uint64_t>& instance_ids_;
  std::atomic<std::uint64_t> launches_{0};
  mutable std::mutex mutex_;
  cudaLibrary_t library_ = nullptr;
  cudaKernel_t begin_kernel_ = nullptr;
  cudaKernel_t end_kernel_ = nullptr;
  cudaKernel_t clear_kernel_ = nullptr;
  cudaKernel_t clock_kernel_ = nullptr;
  cudaStream_t private_stream_ = nullptr;
  std::vector<Slab> slabs_;
  std::size_t free_in_slab_ = 0;
  std::deque<GraphSite> sites_;  // a deque never moves its elements
  GraphSite* probe_ = nullptr;
  std::vector<GraphSample> samples_;
  Losses losses_;
  std::vector<CapturedScope> unstamped_;
  std::vector<GraphInterval> kept_derived_;
};

}  // namespace detail
GPUPROF_NAMESPACE_END

#endif  // GPUPROF_WITH_CUDA
