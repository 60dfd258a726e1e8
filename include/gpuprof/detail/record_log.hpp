// gpuprof/detail/record_log.hpp: one thread's finished scope instances.
//
// The owning thread appends without locking; Profiler::report() reads from
// another thread. Storage is a list of chunks of doubling size that never
// move, and `published` (release/acquire) tells readers how many records are
// complete. Records that are already published are only changed under
// `access`, a flag that is contended only while a report is being built:
//   readers (report, reset) take it with spinning,
//   the owner (resolving GPU times, rewinding after a reset) only tries it
//   and postpones the work when a reader holds it.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "../config.hpp"
#include "../cuda_events.hpp"
#include "../work.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

struct InstanceRecord {
  std::uint64_t id = 0;
  std::uint32_t node = 0;             // global node id
  std::int64_t host_begin_ticks = 0;  // host_ticks(): converted to ns by report()
  std::int64_t host_end_ticks = 0;
  Work work;
  float gpu_ms = -1;           // < 0: not known (yet)
  bool gpu_pending = false;    // events recorded, not yet read back and returned
  bool step_left_out = false;  // began in a step the schedule does not keep (mode_step_left_out)
#if GPUPROF_WITH_CUDA
  EventPair events;
#endif
};

class RecordLog {
 public:
  RecordLog() = default;
  RecordLog(const RecordLog&) = delete;
  RecordLog& operator=(const RecordLog&) = delete;

  // Owner: makes sure records [0, count) have storage (allocates chunks as
  // needed; steady state allocates nothing). Scopes call it at entry, where
  // an allocation failure may throw, so that closing one never allocates.
  void reserve(std::uint64_t count) {
    while (capacity_ < count) {
      const int chunk = highest_bit(capacity_ / first_chunk + 1);
      chunks_[chunk] = std::make_unique<InstanceRecord[]>(chunk_capacity(chunk));
      capacity_ += chunk_capacity(chunk);
    }
  }
  std::uint64_t capacity() const noexcept { return capacity_; }
  // Owner: the slot after the last published record, within what reserve()
  // made room for. A cursor walks the current chunk, so a scope computes no
  // chunk location unless it starts a new chunk.
  InstanceRecord& next_slot() noexcept {
    if (cursor_ == chunk_end_) place_cursor();
    return *cursor_;
  }
  // Owner: makes the slot from next_slot() visible to readers.
  // It also prefetches the cache lines of the slot a dozen records on (as a
  // write prefetch where the build targets PREFETCHW, else into L1): the line
  // is then there before a scope stores into it (2-3 ns a scope on the GPU
  // machine's Xeon host, default flags, where the stores otherwise wait). Integer arithmetic: the address may
  // lie past the chunk, which a prefetch may name (it never faults) and a pointer may not.
  void publish_next() noexcept {
    ++cursor_;
#if defined(__GNUC__) || defined(__clang__)
    const std::uintptr_t ahead = reinterpret_cast<std::uintptr_t>(cursor_) + prefetch_distance;
    __builtin_prefetch(reinterpret_cast<const void*>(ahead), 1, 3);
    __builtin_prefetch(reinterpret_cast<const void*>(ahead + 64), 1, 3);  // a record spans two lines
#endif
    published_.store(++size_, std::memory_order_release);
  }
  std::uint64_t size() const noexcept { return size_; }  // owner's view

  // Readers and the owner holding `access`.
  std::uint64_t published() const noexcept { return published_.load(std::memory_order_acquire); }
  InstanceRecord& at(std::uint64_t index) noexcept {
    const Location where = locate(index);
    return chunks_[where.chunk][where.offset];
  }

  // Owner, holding `access`: keeps records [from, size) as [0, size - from).
  void drop_front(std::uint64_t from) noexcept {
    const std::uint64_t kept = size_ - from;
    for (std::uint64_t i = 0; i < kept; ++i) at(i) = at(from + i);
    size_ = kept;
    cursor_ = chunk_end_ = nullptr;  // placed again by the next next_slot()
    published_.store(kept, std::memory_order_release);
  }

  // --- access flag -----------------------------------------------------------
  void lock_for_reading() noexcept {
    int expected = 0;
    while (!access_.compare_exchange_weak(expected, reader, std::memory_order_acquire)) {
      expected = 0;
      std::this_thread::yield();  // the owner holds it for microseconds at most
    }
  }
  void unlock_for_reading() noexcept { access_.store(0, std::memory_order_release); }
  bool try_lock_for_owner() noexcept {
    int expected = 0;
    return access_.compare_exchange_strong(expected, owner, std::memory_order_acquire);
  }
  void unlock_for_owner() noexcept { access_.store(0, std::memory_order_release); }

 private:
  static constexpr std::uint64_t first_chunk = 1024;
  static constexpr int max_chunks = 48;  // 1024 * (2^48 - 1) records: never reached
  static constexpr int reader = 1, owner = 2;
  static constexpr std::uintptr_t prefetch_distance = 12 * sizeof(InstanceRecord);
  struct Location {
    int chunk;
    std::uint64_t offset;
  };
  static std::uint64_t chunk_capacity(int chunk) { return first_chunk << chunk; }
  // Chunk k holds indices [first * (2^k - 1), first * (2^(k+1) - 1)), so k is
  // the highest set bit of index / first + 1 (a bit scan: this runs per scope).
  static Location locate(std::uint64_t index) noexcept {
    const std::uint64_t scaled = index / first_chunk + 1;
    const int chunk = highest_bit(scaled);
    return {chunk, index - first_chunk * ((std::uint64_t{1} << chunk) - 1)};
  }
  static int highest_bit(std::uint64_t nonzero) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(nonzero);
#else
    int bit = 0;
    while ((nonzero >> (bit + 1)) != 0) ++bit;
    return bit;
#endif
  }

  void place_cursor() noexcept {
    const Location where = locate(size_);
    cursor_ = &chunks_[where.chunk][where.offset];
    chunk_end_ = chunks_[where.chunk].get() + chunk_capacity(where.chunk);
  }

  // What every scope touches first, the chunk table last.
  InstanceRecord* cursor_ = nullptr;     // at(size_) while below chunk_end_
  InstanceRecord* chunk_end_ = nullptr;  // end of cursor_'s chunk; equal to cursor_: place it
  std::uint64_t size_ = 0;
  std::uint64_t capacity_ = 0;  // records the allocated chunks hold
  std::atomic<std::uint64_t> published_{0};
  std::atomic<int> access_{0};
  std::unique_ptr<InstanceRecord[]> chunks_[max_chunks];
};

// Holds a RecordLog's access flag for reading for the lifetime of the guard.
class ReadingGuard {
 public:
  explicit ReadingGuard(RecordLog& log) : log_(log) { log_.lock_for_reading(); }
  ~ReadingGuard() { log_.unlock_for_reading(); }
  ReadingGuard(const ReadingGuard&) = delete;
  ReadingGuard& operator=(const ReadingGuard&) = delete;

 private:
  RecordLog& log_;
};

}  // namespace detail
GPUPROF_NAMESPACE_END
