// detail/file_format.hpp: gpuprof::write's choice of format by the file's
// name, shared by every model it writes.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "../atomic_file.hpp"
#include "../config.hpp"
#include "../error.hpp"

GPUPROF_NAMESPACE_BEGIN

namespace detail {

struct FileFormat {
  const char* extension;                // ".trace.json"
  std::function<std::string()> render;  // the file's text
};

inline bool path_ends_with(const std::string& path, const std::string& suffix) {
  return path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Writes, whole or not at all, the format whose extension ends `path` (the
// longest that does: "run.trace.json" is a trace, not a report). Any other
// name is a gpuprof::Error that lists what `what` can be written as.
inline void write_by_extension(const std::string& path, const char* what,
                               const std::vector<FileFormat>& formats) {
  const FileFormat* chosen = nullptr;
  for (const FileFormat& format : formats)
    if (path_ends_with(path, format.extension) &&
        (chosen == nullptr || std::string(format.extension).size() > std::string(chosen->extension).size()))
      chosen = &format;
  if (chosen == nullptr) {
    std::string known;
    for (std::size_t i = 0; i < formats.size(); ++i)
      known += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + std::string(formats[i].extension);
    throw Error("cannot write " + path + ": its extension names no format; " + what + " is written as " +
                known);
  }
  write_file_atomically(path, chosen->render());
}

}  // namespace detail

GPUPROF_NAMESPACE_END
