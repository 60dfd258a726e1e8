// A scope whose memory runs out: the failure surfaces at the scope's entry
// (std::bad_alloc, with the thread's scope stack as it was), never in its
// destructor (which would terminate the program). Failures are injected by
// replacing the global operator new, so its own program.
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include <gpuprof/profiler.hpp>
#include <gpuprof/scope.hpp>

namespace {
std::atomic<bool> fail_allocations{false};

void* allocate(std::size_t bytes) {
  if (fail_allocations.load(std::memory_order_relaxed)) throw std::bad_alloc();
  if (void* memory = std::malloc(bytes == 0 ? 1 : bytes)) return memory;
  throw std::bad_alloc();
}

// Every allocation between construction and destruction throws.
struct AllocationsFail {
  AllocationsFail() { fail_allocations = true; }
  ~AllocationsFail() { fail_allocations = false; }
};

std::uint64_t logged() { return gpuprof::detail::recorder().this_thread().records.size(); }

// Opens and closes scopes until the calling thread's record log holds `count`.
void fill_to(std::uint64_t count) {
  while (logged() < count) {
    GPUPROF_SCOPE("filler");
  }
}
void open_inner() { GPUPROF_SCOPE("inner"); }
}  // namespace

void* operator new(std::size_t bytes) { return allocate(bytes); }
void* operator new[](std::size_t bytes) { return allocate(bytes); }
void operator delete(void* memory) noexcept { std::free(memory); }
void operator delete[](void* memory) noexcept { std::free(memory); }
void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }
void operator delete[](void* memory, std::size_t) noexcept { std::free(memory); }

TEST_CASE("closing scopes allocates nothing, even where the record log needs a new chunk") {
  auto& profiler = gpuprof::profiler();
  profiler.set_gpu_timing(false);  // the record log is the part under test here
  auto& records = gpuprof::detail::recorder().this_thread().records;
  {
    GPUPROF_SCOPE("outer");
    GPUPROF_SCOPE("inner");
  }  // names and nodes exist from now on
  // Two scopes open when one record is left in the chunk: the outer one's
  // record lands in the next chunk, which its entry must already have taken.
  fill_to(records.capacity() - 1);
  const std::uint64_t capacity = records.capacity();
  {
    GPUPROF_SCOPE("outer");
    GPUPROF_SCOPE("inner");
    CHECK(records.capacity() > capacity);
    fail_allocations = true;  // both destructors run with every allocation failing
  }
  fail_allocations = false;
  CHECK(logged() == capacity + 1);
  const auto report = profiler.report();
  bool saw_outer = false;
  for (const auto& node : report.nodes) saw_outer |= node.path == "outer";
  CHECK(saw_outer);
}

TEST_CASE("a scope that cannot get room for its record throws at entry and leaves the stack as it was") {
  auto& profiler = gpuprof::profiler();
  profiler.set_gpu_timing(false);
  auto& records = gpuprof::detail::recorder().this_thread().records;
  {
    GPUPROF_SCOPE("outer");
    GPUPROF_SCOPE("inner");
  }
  fill_to(records.capacity() - 1);  // room for one more record: outer's, not inner's
  const std::uint64_t before = logged();
  {
    GPUPROF_SCOPE("outer");
    {
      const AllocationsFail failing;
      CHECK_THROWS_AS(open_inner(), std::bad_alloc);
    }
    CHECK(gpuprof::detail::innermost_scope_node() != gpuprof::detail::root_node);  // still in outer
  }
  CHECK(gpuprof::detail::innermost_scope_node() == gpuprof::detail::root_node);
  CHECK(logged() == before + 1);  // outer only: the failed inner scope left no record
  profiler.reset();
  profiler.report();
}
