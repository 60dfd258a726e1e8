// gpuprof/detail/cupti_params.hpp: a CUPTI parameter block, zeroed, with its
// size set (CUPTI's versioning), for the counter headers.
#pragma once
#include <cstddef>

#include "../config.hpp"

GPUPROF_NAMESPACE_BEGIN
namespace detail {

template <class Params>
Params cupti_params(std::size_t size) {
  Params params{};
  params.structSize = size;
  return params;
}

}  // namespace detail
GPUPROF_NAMESPACE_END
