// A test may look inside.
#include <gpuprof/detail/thing.hpp>
int main() { gpuprof::detail::Thing thing; }
