// Scopes, report(), reset() and observers used from many threads at once. The
// checks here are few; the point is the tsan preset (ThreadSanitizer) and the
// asan preset running this with every access instrumented, and, where a
// device is usable, the GPU path: every scope then records CUDA events, on a
// stream of its thread's own that has work in it, so report() meets event
// pairs still in flight.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gpuprof/device.hpp>
#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto stress_time = std::chrono::milliseconds(300);

// Counts every call; flags a report()/reset() call that arrives after
// remove_observer returned (the test sets `removed` then).
struct CountingObserver final : gpuprof::ScopeObserver {
  std::atomic<std::uint64_t> begins{0}, ends{0}, calls{0};
  std::atomic<bool>* removed = nullptr;
  std::atomic<bool>* called_after_removal = nullptr;

  void on_scope_begin(std::uint64_t) override { begins.fetch_add(1); }
  void on_scope_end(std::uint64_t) override { ends.fetch_add(1); }
  void contribute(gpuprof::Report&) override { note_call(); }
  void on_reset() override { note_call(); }

 private:
  void note_call() {
    calls.fetch_add(1);
    if (!removed) return;
    // A call that takes a while: removal must wait for it to end.
    std::this_thread::sleep_for(std::chrono::microseconds(20));
    if (removed->load()) called_after_removal->store(true);
  }
};

// What a worker thread threw: an exception leaving a std::thread would end
// the whole test binary with std::terminate, saying nothing.
class ThreadFailures {
 public:
  void note(const std::string& what) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (count_++ == 0) first_ = what;
  }
  void check() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    CHECK_MESSAGE(count_ == 0, count_ << " worker thread(s) threw, first: " << first_);
  }

 private:
  mutable std::mutex mutex_;
  int count_ = 0;
  std::string first_;
};

// Starts fn on `count` threads; each runs until `stop` is set or fn throws.
template <class Fn>
void start(std::vector<std::thread>& threads, int count, const std::atomic<bool>& stop,
           ThreadFailures& failures, Fn fn) {
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&stop, &failures, fn, i] {
      try {
        while (!stop.load()) fn(i);
      } catch (const std::exception& error) {
        failures.note(error.what());
      } catch (...) {
        failures.note("an exception not derived from std::exception");
      }
    });
}

void run_for_a_while(std::vector<std::thread>& threads, std::atomic<bool>& stop,
                     const ThreadFailures& failures) {
  std::this_thread::sleep_for(stress_time);
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
  failures.check();
}

// A usable device means GPU timing, never a quiet fall back to the host clock:
// then every instance in a report has its GPU time; otherwise none has.
bool gpu_timing_expected() {
  const bool usable = gpuprof::device_status().usable;
  REQUIRE(gpuprof::profiler().timing_source() ==
          (usable ? gpuprof::TimingSource::cuda_events : gpuprof::TimingSource::host_clock));
  return usable;
}
void check_gpu_times(const gpuprof::Report& report, bool gpu) {
  for (const gpuprof::ScopeNode& node : report.nodes) {
    CHECK(node.count == node.host_ms.n);
    CHECK(node.gpu_ms.n == (gpu ? node.count : 0));
  }
}

// One stream and one device buffer per scope thread (nothing without a
// device). work() puts a memset of the buffer on the thread's stream: the GPU
// falls behind the host, so report() finds pairs published after its device
// synchronization still in flight.
class ThreadStreams {
 public:
  ThreadStreams(int threads, bool gpu)
      : streams_(static_cast<std::size_t>(threads), nullptr),
        buffers_(static_cast<std::size_t>(threads), nullptr) {
#if GPUPROF_WITH_CUDA
    if (!gpu) return;
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      GPUPROF_CUDA_CHECK(cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking));
      GPUPROF_CUDA_CHECK(cudaMalloc(&buffers_[i], buffer_bytes));
    }
#else
    REQUIRE_FALSE(gpu);
#endif
  }
  ~ThreadStreams() {
#if GPUPROF_WITH_CUDA
    for (std::size_t i = 0; i < streams_.size(); ++i) {
      if (streams_[i]) cudaStreamSynchronize(streams_[i]);
      if (buffers_[i]) cudaFree(buffers_[i]);
      if (streams_[i]) cudaStreamDestroy(streams_[i]);
    }
#endif
  }
  ThreadStreams(const ThreadStreams&) = delete;
  ThreadStreams& operator=(const ThreadStreams&) = delete;

  gpuprof::Stream stream(int thread) const { return streams_[static_cast<std::size_t>(thread)]; }
  void work(int thread) const {
#if GPUPROF_WITH_CUDA
    const auto i = static_cast<std::size_t>(thread);
    if (buffers_[i]) GPUPROF_CUDA_CHECK(cudaMemsetAsync(buffers_[i], thread, buffer_bytes, streams_[i]));
#else
    static_cast<void>(thread);
#endif
  }

 private:
  static constexpr std::size_t buffer_bytes = std::size_t{16} << 20;  // ~8 us of memset on an H100
  std::vector<gpuprof::Stream> streams_;
  std::vector<void*> buffers_;
};

}  // namespace

TEST_CASE("8 threads open scopes while others report, reset and add and remove observers") {
  gpuprof::Profiler& profiler = gpuprof::profiler();
  profiler.reset();
  const bool gpu = gpu_timing_expected();
  constexpr int scope_threads = 8;
  const ThreadStreams streams(scope_threads, gpu);
  CountingObserver observers[3];  // alive for the whole test: scopes may still call them
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> reports{0};
  ThreadFailures failures;
  std::vector<std::thread> threads;
  profiler.add_observer(&observers[2]);  // first, and it stays: it sees every scope whole

  start(threads, scope_threads, stop, failures, [&streams](int thread) {
    const gpuprof::Stream stream = streams.stream(thread);
    GPUPROF_SCOPE("concurrency/outer", stream);
    { GPUPROF_SCOPE("inner", stream); }
    streams.work(thread);
    GPUPROF_SCOPE(std::string("thread ") + std::to_string(thread), stream);  // a run-time name
  });
  start(threads, 2, stop, failures, [&](int) {
    check_gpu_times(profiler.report(), gpu);
    reports.fetch_add(1);
  });
  start(threads, 1, stop, failures, [&](int) {
    profiler.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  start(threads, 2, stop, failures, [&](int thread) {
    CountingObserver& observer = observers[thread];
    profiler.add_observer(&observer);
    std::this_thread::yield();
    profiler.remove_observer(&observer);
  });
  run_for_a_while(threads, stop, failures);
  profiler.remove_observer(&observers[2]);

  CHECK(reports.load() > 0);
  CHECK(observers[2].begins.load() > 0);
  CHECK(observers[2].begins.load() == observers[2].ends.load());

  // Still consistent afterwards: a reset, then exactly what ran.
  profiler.reset();
  for (int i = 0; i < 5; ++i) {
    GPUPROF_SCOPE("concurrency/after");
  }
  const gpuprof::Report report = profiler.report();
  check_gpu_times(report, gpu);
  std::uint64_t after = 0;
  for (const gpuprof::ScopeNode& node : report.nodes)
    if (node.path == "concurrency/after") after = node.count;
  CHECK(after == 5);
  profiler.reset();
}

TEST_CASE("once remove_observer returns, report() and reset() never call the observer again") {
  gpuprof::Profiler& profiler = gpuprof::profiler();
  std::atomic<bool> stop{false};
  std::atomic<bool> called_after_removal{false};
  ThreadFailures failures;
  std::vector<std::thread> threads;
  start(threads, 2, stop, failures, [&](int) { (void)profiler.report(); });
  start(threads, 1, stop, failures, [&](int) { profiler.reset(); });

  std::uint64_t calls = 0, rounds = 0;
  for (const auto end = Clock::now() + stress_time; Clock::now() < end; ++rounds) {
    std::atomic<bool> removed{false};
    auto observer = std::make_unique<CountingObserver>();
    observer->removed = &removed;
    observer->called_after_removal = &called_after_removal;
    profiler.add_observer(observer.get());
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    profiler.remove_observer(observer.get());
    removed.store(true);
    calls += observer->calls.load();
    observer.reset();  // destroyed at once: a late call would be a use after free
  }
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
  failures.check();
  CHECK_FALSE(called_after_removal.load());
  CHECK(calls > 0);  // the observers were really called while registered
  MESSAGE(rounds << " observers added, called " << calls << " times, removed and destroyed");
}
