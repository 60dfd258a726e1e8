// gpuprof_cli/output_paths.hpp: the output files of one command line, checked
// together before any work, so that a long run is never lost to a bad path
// and no output lands on an input or on another output.
//
// ```cpp
// #include <gpuprof_cli/output_paths.hpp>
// #include <iostream>
// std::ostream& text_stream(const std::string& json_path, const std::string& csv_path,
//                           const std::string& input) {
//   const std::vector<gpuprof::OutputFile> outputs = {{"--json", json_path}, {"--csv", csv_path}};
//   gpuprof::check_output_files(outputs, {input});  // throws gpuprof::Error naming the flag
//   return gpuprof::any_to_standard_output(outputs) ? std::cerr : std::cout;
// }
// ```
//
// A path is refused (gpuprof::Error "FLAG 'PATH': why") when no whole file
// could be written there, or when it names the same file as an input or
// another output (hard links and other spellings included). "-" is standard
// output, at most once; devices and FIFOs are written in place. Every rule:
// docs/output-files.md#checked-before-any-work. POSIX only.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <system_error>
#include <vector>

#include <gpuprof/atomic_file.hpp>
#include <gpuprof/config.hpp>
#include <gpuprof/error.hpp>

GPUPROF_NAMESPACE_BEGIN

struct OutputFile {
  std::string flag;  // as the user typed it, for messages ("--json", "-o")
  std::string path;  // "" when the output was not asked for (skipped)
};

namespace detail {

// Which file a path is or will be: standard output, an existing regular file
// (device, inode), a file to create (its directory's device and inode, and
// its name), or something written in place that is compared with nothing.
struct FileIdentity {
  enum class Kind { standard_output, existing, to_create, in_place } kind = Kind::in_place;
  dev_t device = 0;
  ino_t inode = 0;
  std::string name;

  bool same_as(const FileIdentity& other) const {
    if (kind == Kind::in_place || kind != other.kind) return false;
    return kind == Kind::standard_output ||
           (device == other.device && inode == other.inode && name == other.name);
  }
};

[[noreturn]] inline void refuse_output(const OutputFile& output, const std::string& why) {
  throw Error(output.flag + " '" + output.path + "': " + why);
}

inline std::string system_reason(int error_number) {
  return std::error_code(error_number, std::generic_category()).message();
}

// The file's name within NAME_MAX of its directory's file system, and the
// longest temporary write_file_atomically may use beside it within PATH_MAX,
// so that a long name fails here, before the work, not at the write.
// `directory` "" (not resolved yet): the usual NAME_MAX.
inline void check_name_lengths(const OutputFile& output, const std::string& target,
                               const std::string& directory) {
  const long name_max = directory.empty() ? -1 : ::pathconf(directory.c_str(), _PC_NAME_MAX);
  const std::size_t limit = name_max > 0 ? static_cast<std::size_t>(name_max) : NAME_MAX;
  const std::size_t slash = target.rfind('/');
  const std::string name = slash == std::string::npos ? target : target.substr(slash + 1);
  if (name.size() > limit)
    refuse_output(output, "the name is " + std::to_string(name.size()) + " bytes, more than the " +
                              std::to_string(limit) + " its file system allows (NAME_MAX)");
  const std::string longest_temporary = temporary_name_beside(target, static_cast<unsigned long long>(-2));
  if (longest_temporary.size() >= PATH_MAX)
    refuse_output(output, "the path of its temporary file would be " +
                              std::to_string(longest_temporary.size()) + " bytes, more than PATH_MAX (" +
                              std::to_string(PATH_MAX) + ")");
}

}  // namespace detail

// Creates and removes a file in `directory`: the only sure test that the
// final rename will have a place to land (for an output directory a program
// fills itself). Throws gpuprof::Error "FLAG 'PATH': why", as check_output_files.
inline void probe_directory(const OutputFile& output, const std::string& directory) {
  // The process id and the clock: a file a killed process left behind under
  // the same (reused) process id does not make the probe fail.
  const std::string probe = directory + "/.gpuprof-write-check-" +
                            std::to_string(static_cast<long>(::getpid())) + "-" +
                            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  const int descriptor = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (descriptor < 0)
    detail::refuse_output(output,
                          "cannot create a file in " + directory + ": " + detail::system_reason(errno));
  ::close(descriptor);
  ::unlink(probe.c_str());
}

namespace detail {

inline FileIdentity output_identity(const OutputFile& output) {
  using Kind = FileIdentity::Kind;
  if (output.path == "-") return {Kind::standard_output, 0, 0, ""};
  check_name_lengths(output, output.path, "");  // before stat() answers a bare "File name too long"
  struct stat status {};
  if (::stat(output.path.c_str(), &status) == 0) {
    if (S_ISDIR(status.st_mode)) refuse_output(output, "is a directory");
    if (standard_stream_of(status) == STDOUT_FILENO) return {Kind::standard_output, 0, 0, ""};
    if (!S_ISREG(status.st_mode)) return {Kind::in_place, 0, 0, ""};
  } else if (errno != ENOENT && errno != ELOOP) {
    refuse_output(output, system_reason(errno));
  }
  std::string target;
  try {
    target = follow_symlinks(output.path);  // loops and foreign links in shared directories throw
  } catch (const Error& error) {
    refuse_output(output, error.what());
  }
  const std::string directory = directory_of(target);
  struct stat directory_status {};
  if (::stat(directory.c_str(), &directory_status) != 0 || !S_ISDIR(directory_status.st_mode))
    refuse_output(output, "no directory " + directory);
  check_name_lengths(output, target, directory);
  probe_directory(output, directory);
  if (::stat(target.c_str(), &status) == 0) {
    if (::access(target.c_str(), W_OK) != 0)
      refuse_output(output, "cannot replace " + target + ": " + system_reason(errno));
    return {Kind::existing, status.st_dev, status.st_ino, ""};
  }
  return {Kind::to_create, directory_status.st_dev, directory_status.st_ino,
          target.substr(target.rfind('/') + 1)};
}

}  // namespace detail

// Checks `outputs` (entries with an empty path are outputs not asked for)
// against each other and against `inputs` (files the run reads; missing ones
// are left to their reader). Throws gpuprof::Error naming the flag and path.
inline void check_output_files(const std::vector<OutputFile>& outputs,
                               const std::vector<std::string>& inputs = {}) {
  std::vector<std::pair<const OutputFile*, detail::FileIdentity>> checked;
  for (const OutputFile& output : outputs) {
    if (output.path.empty()) continue;
    const detail::FileIdentity identity = detail::output_identity(output);
    for (const std::string& input : inputs) {
      struct stat status {};
      if (::stat(input.c_str(), &status) == 0 && S_ISREG(status.st_mode) &&
          identity.same_as({detail::FileIdentity::Kind::existing, status.st_dev, status.st_ino, ""}))
        detail::refuse_output(output, "is the input " + input + " (it would be overwritten)");
    }
    for (const auto& [other, other_identity] : checked)
      if (identity.same_as(other_identity))
        detail::refuse_output(
            output, "is also the output of " + other->flag + " '" + other->path + "' (one would be lost)");
    checked.emplace_back(&output, identity);
  }
}

// True when an output goes to standard output ("-"): the program's own
// human-readable text then belongs on standard error, so that standard
// output carries the one document asked for.
inline bool any_to_standard_output(const std::vector<OutputFile>& outputs) {
  for (const OutputFile& output : outputs)
    if (output.path == "-") return true;
  return false;
}

GPUPROF_NAMESPACE_END
