// gpuprof/scope_handle.hpp: scopes that begin and end by a call, for code
// where a block does not fit (values made inside the step are used after it;
// the end is in another function).
//
// ```cpp
// #include <gpuprof/profiler.hpp>
// #include <gpuprof/scope_handle.hpp>
// int main() {
//   gpuprof::Stream stream = nullptr;
//   gpuprof::ScopeHandle step = gpuprof::begin_scope("step", stream);
//   double loss = 0;  // made inside the step, used after it
//   for (int i = 1; i <= 1000; ++i) loss += 1.0 / i;
//   step.end();  // or let it be destroyed
//   return loss > 0 ? 0 : 1;
// }
// ```
//
// begin_scope(name[, stream][, work]) opens the same scope GPUPROF_SCOPE does.
// The handle is movable; it ends at destruction if end() was not called, and
// end() on an ended or moved-from handle does nothing. A handle ended before
// the scopes opened inside it stops its clocks at once and leaves the tree
// after them (said once per name); end() on another thread throws. The rules:
// docs/headers.md#scopes-without-a-block.
#pragma once
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "config.hpp"
#include "diagnostics.hpp"
#include "cuda_events.hpp"
#include "error.hpp"
#include "scope.hpp"
#include "work.hpp"

GPUPROF_NAMESPACE_BEGIN

#ifndef GPUPROF_DISABLE

class ScopeHandle;
// Opens a scope that ends with ScopeHandle::end() or the handle's destruction.
// `name`, `stream`, `work`: as GPUPROF_SCOPE's.
template <class Name>
ScopeHandle begin_scope(const Name& name, Stream stream = nullptr);
template <class Name>
ScopeHandle begin_scope(const Name& name, Stream stream, const Work& work);

class ScopeHandle {
 public:
  // An ended handle: what a moved-from one is, and a place to move one into.
  ScopeHandle() noexcept = default;
  ScopeHandle(ScopeHandle&& other) noexcept { scope_.take(other.scope_); }
  // Ends this handle's scope first, if it is open.
  ScopeHandle& operator=(ScopeHandle&& other) noexcept {
    if (this != &other) {
      end_here();
      scope_.take(other.scope_);
    }
    return *this;
  }
  ScopeHandle(const ScopeHandle&) = delete;
  ScopeHandle& operator=(const ScopeHandle&) = delete;
  ~ScopeHandle() { end_here(); }

  // Ends the scope; nothing if it has ended. gpuprof::Error on a thread
  // other than the one that began it (the scope stays open).
  void end() {
    if (scope_.timed() && scope_.s_.thread != detail::this_thread_state)
      throw Error(
          "gpuprof: ScopeHandle::end() called on a thread other than the one that began the scope; "
          "a scope ends on its own thread");
    scope_.end();
    scope_.mode_ = detail::mode_ended;
  }
  // Begun and not ended yet (false in NVTX-only mode after end(), as otherwise).
  bool active() const noexcept { return !(scope_.mode_ & detail::mode_ended); }
  // The scope instance's id (kernels point to it); 0 in NVTX-only mode or once ended.
  std::uint64_t instance_id() const noexcept { return active() ? scope_.instance_id() : 0; }

 private:
  template <class Name>
  friend ScopeHandle begin_scope(const Name& name, Stream stream);
  template <class Name>
  friend ScopeHandle begin_scope(const Name& name, Stream stream, const Work& work);

  template <class Name>
  ScopeHandle(const Name& name, Stream stream, const Work* work) {
    try {
      scope_.begin(call_site(name), name, stream, work);
    } catch (...) {  // nothing is left open (see Scope::open): scope_'s destructor must not end it
      scope_.mode_ = detail::mode_ended;
      throw;
    }
  }

  // A destructor cannot throw: on a foreign thread the scope is left open
  // there (reports list it as open) and the mistake is said on stderr.
  void end_here() noexcept {
    if (scope_.timed() && scope_.s_.thread != detail::this_thread_state) {
      diagnose(Severity::note,
               "a ScopeHandle was destroyed on a thread other than the one that began it; its scope is left "
               "open there (a scope ends on its own thread)");
      scope_.mode_ = detail::mode_ended;
      return;
    }
    scope_.end();
    scope_.mode_ = detail::mode_ended;
  }

  // GPUPROF_SCOPE has a call site per use; a function has none, so string
  // literals share a small table of them by address: a literal seen before
  // costs one pointer comparison, as in the macro. Two literals in one slot,
  // or a run-time string, are looked up by text (still correct, only slower).
  template <class Name>
  static CallSite& call_site(const Name& name) noexcept {
    static CallSite sites[64];
    if constexpr (std::is_array_v<Name>) {
      const auto address = reinterpret_cast<std::uintptr_t>(static_cast<const char*>(name));
      return sites[(address >> 3) % 64];
    } else {
      return sites[0];
    }
  }

  Scope scope_;
};

template <class Name>
ScopeHandle begin_scope(const Name& name, Stream stream) {
  return ScopeHandle(name, stream, nullptr);
}
template <class Name>
ScopeHandle begin_scope(const Name& name, Stream stream, const Work& work) {
  return ScopeHandle(name, stream, &work);
}
template <class Name>
ScopeHandle begin_scope(const Name& name, const Work& work) {
  return begin_scope(name, nullptr, work);
}

#else  // GPUPROF_DISABLE: handles that do nothing (the arguments are still evaluated)

class ScopeHandle {
 public:
  void end() noexcept {}
  bool active() const noexcept { return false; }
  std::uint64_t instance_id() const noexcept { return 0; }
};
template <class Name>
ScopeHandle begin_scope(const Name&, Stream = nullptr) {
  return {};
}
template <class Name>
ScopeHandle begin_scope(const Name&, Stream, const Work&) {
  return {};
}
template <class Name>
ScopeHandle begin_scope(const Name&, const Work&) {
  return {};
}

#endif

GPUPROF_NAMESPACE_END
