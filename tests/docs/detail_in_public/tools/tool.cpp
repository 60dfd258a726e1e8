#include <gpuprof/detail/thing.hpp>
// a comment about detail::Thing is not a use
int main() {
  const char* text = "detail::Thing in a string is not a use";
  gpuprof::detail::Thing thing;
  return text == nullptr;
}
