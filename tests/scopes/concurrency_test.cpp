// Scopes, report(), reset() and observers used from many threads at once. The
// checks here are few; the point is the tsan preset (ThreadSanitizer) and the
// asan preset running this with every access instrumented.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

// Starts fn on `count` threads; each runs until `stop` is set.
template <class Fn>
void start(std::vector<std::thread>& threads, int count, const std::atomic<bool>& stop, Fn fn) {
  for (int i = 0; i < count; ++i)
    threads.emplace_back([&stop, fn, i] {
      while (!stop.load()) fn(i);
    });
}

void run_for_a_while(std::vector<std::thread>& threads, std::atomic<bool>& stop) {
  std::this_thread::sleep_for(stress_time);
  stop.store(true);
  for (std::thread& thread : threads) thread.join();
}

}  // namespace

TEST_CASE("8 threads open scopes while others report, reset and add and remove observers") {
  gpuprof::Profiler& profiler = gpuprof::profiler();
  profiler.reset();
  CountingObserver observers[3];  // alive for the whole test: scopes may still call them
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> reports{0};
  std::vector<std::thread> threads;
  profiler.add_observer(&observers[2]);  // first, and it stays: it sees every scope whole

  start(threads, 8, stop, [](int thread) {
    GPUPROF_SCOPE("concurrency/outer");
    { GPUPROF_SCOPE("inner"); }
    GPUPROF_SCOPE(std::string("thread ") + std::to_string(thread));  // a run-time name
  });
  start(threads, 2, stop, [&](int) {
    const gpuprof::Report report = profiler.report();
    for (const gpuprof::ScopeNode& node : report.nodes) CHECK(node.count == node.host_ms.n);
    reports.fetch_add(1);
  });
  start(threads, 1, stop, [&](int) {
    profiler.reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  start(threads, 2, stop, [&](int thread) {
    CountingObserver& observer = observers[thread];
    profiler.add_observer(&observer);
    std::this_thread::yield();
    profiler.remove_observer(&observer);
  });
  run_for_a_while(threads, stop);
  profiler.remove_observer(&observers[2]);

  CHECK(reports.load() > 0);
  CHECK(observers[2].begins.load() > 0);
  CHECK(observers[2].begins.load() == observers[2].ends.load());

  // Still consistent afterwards: a reset, then exactly what ran.
  profiler.reset();
  for (int i = 0; i < 5; ++i) {
    GPUPROF_SCOPE("concurrency/after");
  }
  std::uint64_t after = 0;
  for (const gpuprof::ScopeNode& node : profiler.report().nodes)
    if (node.path == "concurrency/after") after = node.count;
  CHECK(after == 5);
  profiler.reset();
}

TEST_CASE("once remove_observer returns, report() and reset() never call the observer again") {
  gpuprof::Profiler& profiler = gpuprof::profiler();
  std::atomic<bool> stop{false};
  std::atomic<bool> called_after_removal{false};
  std::vector<std::thread> threads;
  start(threads, 2, stop, [&](int) { (void)profiler.report(); });
  start(threads, 1, stop, [&](int) { profiler.reset(); });

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
  CHECK_FALSE(called_after_removal.load());
  CHECK(calls > 0);  // the observers were really called while registered
  MESSAGE(rounds << " observers added, called " << calls << " times, removed and destroyed");
}
