// A public header that exposes its internals. Comments may say detail::Thing.
#pragma once
#include "detail/thing.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {
inline void helper(const Thing&) {}  // inside namespace detail: not public
}  // namespace detail

using detail::helper;  // a using-declaration makes a name public on purpose

class Leaky : public detail::Thing {
 public:
  explicit Leaky(detail::Thing& thing) : thing_(detail::copy(thing)) {}
  int fine() const { return detail::count(thing_); }  // a body is not an interface
  detail::Thing& exposed();

 private:
  void hidden(detail::Thing&);
  detail::Thing thing_;
};

class Sealed final : private detail::Thing {
 public:
  Sealed() = default;

 private:
  struct Part {  // nested in a private part: private, whatever its own labels say
   public:
    detail::Thing thing;
  };
};

inline void take(const detail::Thing& thing) { detail::helper(thing); }

GPUPROF_NAMESPACE_END
