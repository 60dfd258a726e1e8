// harness/device.hpp: which backend the driver runs on (--device), and the few
// facts about the device the driver reads itself (name, memory in use).
#pragma once
#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/run_flags.hpp"
#include "model/backend.hpp"

namespace transformer::harness {

// The GPU a program needs is not there: no usable device, or CUPTI cannot
// capture (another profiler attached, ...). The programs print what() and
// exit with status 3, as the README's exit-status table says.
struct DeviceUnavailable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Device {
 public:
  // --device cuda without a usable GPU throws DeviceUnavailable; auto falls
  // back to the CPU and says why in notice().
  static Device select(DeviceChoice choice);

  bool is_cuda() const { return cuda_; }
  const char* backend_name() const { return cuda_ ? "cuda" : "cpu"; }
  const std::string& name() const { return name_; }
  const std::string& notice() const { return notice_; }  // "" when nothing to say
  // The cuDNN library the CUDA backend loaded ("9.14.0"), whether or not a run
  // uses its attention; nothing on the CPU or in a build without cuDNN.
  const std::optional<std::string>& cudnn() const { return cudnn_; }

  // The CPU backend computes in fp32 only.
  bool supports(Precision precision) const { return cuda_ || precision == Precision::fp32; }
  std::unique_ptr<Backend> make_backend(const RunConfig& config) const;

  // Bytes of device memory in use by anyone (cudaMemGetInfo: total - free);
  // std::nullopt on the CPU.
  std::optional<std::size_t> memory_in_use() const;

 private:
  bool cuda_ = false;
  std::string name_;
  std::string notice_;
  std::optional<std::string> cudnn_;
};

}  // namespace transformer::harness
