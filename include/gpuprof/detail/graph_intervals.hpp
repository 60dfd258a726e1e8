// gpuprof/detail/graph_intervals.hpp: GPU time of scopes captured into CUDA
// graphs, derived from kernel capture instead of stamp kernels.
//
// While a KernelCapture is the recorder's GraphIntervalSource, a captured
// scope adds no stamps: report() asks the source for the scope's interval on
// every launch (first start to last end of the work captured in it). Plain
// host code, tested on synthetic records. What it sees and cannot see:
// docs/internals.md#scopes-in-cuda-graphs-intervals-from-kernel-capture-detailgraph_intervalshpp
#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../config.hpp"

struct CUstream_st;  // cudaStream_t's pointee, declared without the toolkit

GPUPROF_NAMESPACE_BEGIN
namespace detail {

// One scope instance entered on a capturing stream without stamps.
struct CapturedScope {
  std::uint64_t id = 0;       // its instance id at capture time
  std::uint64_t parent = 0;   // the instance around it on its thread (0: none); may be an eager scope
  std::uint64_t capture = 0;  // the stream capture's id (cudaStreamGetCaptureInfo)
  std::uint32_t node = 0;     // global scope node id
  std::uint32_t thread = 0;   // the capturing thread's dense id
};

// The GPU interval of one captured scope instance in one graph launch, on
// gpuprof's host clock (steady_clock ns, as KernelRecord times are).
struct GraphInterval {
  std::uint64_t scope = 0;   // CapturedScope::id
  std::uint32_t launch = 0;  // the graph launch's correlation id
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

// Implemented by KernelCapture. Called by report() with every scope captured
// without stamps so far; returns their intervals for the launches it saw
// since the last reset, in any order.
class GraphIntervalSource {
 public:
  virtual ~GraphIntervalSource() = default;
  virtual std::vector<GraphInterval> graph_intervals(const std::vector<CapturedScope>& scopes) = 0;
  // A scope captured without stamps closed on `stream`, which is capturing:
  // a point where the source may add a node of its own to the graph
  // (KernelCapture splits long graphs there; see cupti.hpp).
  virtual void captured_scope_closed(CUstream_st* stream) noexcept = 0;
};

// Adds to `into` the intervals of `more` it does not hold yet: a (scope,
// launch) pair is one replay of one scope instance, however many times it is
// derived. Intervals a KernelCapture derived when it stopped are kept for
// later reports (GraphTimings::keep_derived), and a capture started again
// derives the same launches once more from the records it still holds.
inline void add_new_intervals(std::vector<GraphInterval>& into, const std::vector<GraphInterval>& more) {
  const auto key = [](const GraphInterval& interval) {
    return std::pair<std::uint64_t, std::uint32_t>(interval.scope, interval.launch);
  };
  std::set<std::pair<std::uint64_t, std::uint32_t>> held;
  for (const GraphInterval& interval : into) held.insert(key(interval));
  for (const GraphInterval& interval : more)
    if (held.insert(key(interval)).second) into.push_back(interval);
}

// Captured scopes with no interval although another scope of the same
// capture has one: their graph ran, they launched no GPU work.
inline std::size_t scopes_without_work(const std::vector<CapturedScope>& scopes,
                                       const std::vector<GraphInterval>& intervals) {
  std::unordered_set<std::uint64_t> timed;
  for (const GraphInterval& interval : intervals) timed.insert(interval.scope);
  std::unordered_set<std::uint64_t> launched_captures;
  for (const CapturedScope& scope : scopes)
    if (timed.count(scope.id) != 0) launched_captures.insert(scope.capture);
  std::size_t without = 0;
  for (const CapturedScope& scope : scopes)
    if (timed.count(scope.id) == 0 && launched_captures.count(scope.capture) != 0) ++without;
  return without;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
