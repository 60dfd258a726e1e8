#pragma once
namespace gpuprof::detail {
struct Thing {};
inline void uses(Thing& thing) { helper(thing); }
}  // namespace gpuprof::detail
