// bench/backend_stream.cpp: Backend::stream() when backend.hpp declares it.
//
// backend.hpp does not declare it yet (requested); the detection below lets
// this driver use it as soon as it exists, without a change here.
#include "backend_stream.hpp"

#include <type_traits>
#include <utility>

namespace transformer::bench {
namespace {

template <class B, class = void>
struct HasStream : std::false_type {};
template <class B>
struct HasStream<B, std::void_t<decltype(std::declval<const B&>().stream())>> : std::true_type {};

// A template, so the branch that names B::stream() is only compiled when it exists.
template <class B>
gpuprof::Stream stream_of([[maybe_unused]] const B& backend) {
  if constexpr (HasStream<B>::value) {
    return reinterpret_cast<gpuprof::Stream>(backend.stream());
  } else {
    return nullptr;
  }
}

}  // namespace

bool backend_exposes_stream() { return HasStream<Backend>::value; }

gpuprof::Stream backend_stream(const Backend& backend) { return stream_of(backend); }

}  // namespace transformer::bench
