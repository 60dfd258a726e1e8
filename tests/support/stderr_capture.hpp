// tests/support/stderr_capture.hpp: what the process wrote to file descriptor
// 2 while a capture was open, for tests of gpuprof's one-time notices (which
// go to stderr from wherever the library first notices something).
#pragma once
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include <unistd.h>

namespace gpuprof_test {

// Redirects file descriptor 2 into a temporary file until read().
class StderrCapture {
 public:
  StderrCapture() {
    std::fflush(stderr);
    saved_ = dup(2);
    file_ = std::tmpfile();
    REQUIRE(saved_ >= 0);
    REQUIRE(file_ != nullptr);
    REQUIRE(dup2(fileno(file_), 2) >= 0);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;
  std::string read() {
    std::fflush(stderr);
    dup2(saved_, 2);
    close(saved_);
    std::rewind(file_);
    std::string text;
    char buffer[4096];
    for (std::size_t got; (got = std::fread(buffer, 1, sizeof buffer, file_)) > 0;) text.append(buffer, got);
    std::fclose(file_);
    return text;
  }

 private:
  int saved_ = -1;
  std::FILE* file_ = nullptr;
};

}  // namespace gpuprof_test
