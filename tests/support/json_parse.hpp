// tests/support/json_parse.hpp: the tests read JSON with the library's own
// strict reader (gpuprof/detail/json_reader.hpp), under the names they use.
#pragma once
#include <gpuprof/detail/json_reader.hpp>

namespace gpuprof_test {
using gpuprof::read_text_file;
using gpuprof::detail::Json;
using gpuprof::detail::parse_json;
using gpuprof::detail::parse_json_file;
}  // namespace gpuprof_test
