// bench/output_paths.cpp: probes writability by creating (and removing) a file
// beside the destination, the same operation gpuprof::write_file_atomically
// will need later; access(2) would say yes to root on paths that then fail.
#include "output_paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <system_error>

#include "options.hpp"

namespace transformer::bench {
namespace {

[[noreturn]] void cannot_write(const std::string& flag, const std::string& path,
                               const std::string& why) {
  throw UsageError(flag + " '" + path + "': cannot write: " + why);
}

void probe_directory(const std::string& flag, const std::string& path,
                     const std::filesystem::path& directory) {
  const std::filesystem::path probe = directory / (".transformer_bench-write-check-" +
                                                   std::to_string(static_cast<long>(::getpid())));
  const int descriptor = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (descriptor < 0)
    cannot_write(flag, path, std::error_code(errno, std::generic_category()).message());
  ::close(descriptor);
  ::unlink(probe.c_str());
}

}  // namespace

void check_output_file(const std::string& flag, const std::string& path) {
  std::error_code error;
  // Standard output, devices and FIFOs are written in place; a symbolic link
  // is followed (see gpuprof/atomic_file.hpp).
  if (path == "-") return;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status))
    return;
  const std::filesystem::path file =
      std::filesystem::is_symlink(std::filesystem::symlink_status(path, error))
          ? std::filesystem::weakly_canonical(path, error)
          : std::filesystem::path(path);
  if (std::filesystem::is_directory(file, error)) cannot_write(flag, path, "it is a directory");
  const std::filesystem::path directory = file.has_parent_path() ? file.parent_path() : ".";
  if (!std::filesystem::is_directory(directory, error))
    cannot_write(flag, path, "no directory " + directory.string());
  probe_directory(flag, path, directory);
}

void prepare_output_directory(const std::string& flag, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) cannot_write(flag, directory, error.message());
  if (!std::filesystem::is_directory(directory, error))
    cannot_write(flag, directory, "not a directory");
  probe_directory(flag, directory, directory);
}

}  // namespace transformer::bench
