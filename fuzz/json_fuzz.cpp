// The JSON reader alone (detail/json_reader.hpp): any bytes either parse or
// throw InputError; a parsed document answers every typed accessor with a
// value or an InputError, never out-of-range access.
#include <gpuprof/detail/json_reader.hpp>

#include "fuzz_target.hpp"

namespace {
void visit(const gpuprof::detail::Json& value) {
  using gpuprof::detail::Json;
  switch (value.type()) {
    case Json::Type::number:
      (void)value.as_number();
      try {
        (void)value.as_integer<std::int64_t>();
        (void)value.as_integer<std::uint32_t>();
      } catch (const gpuprof::InputError&) {
      }
      break;
    case Json::Type::array:
      for (const Json& element : value.elements()) visit(element);
      break;
    case Json::Type::object:
      for (const std::string& key : value.keys()) visit(value[key]);
      break;
    default: break;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return gpuprof_fuzz::run([&] { visit(gpuprof::detail::parse_json(gpuprof_fuzz::text_of(data, size))); });
}
