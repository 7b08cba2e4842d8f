// What the CUDA runtime, the NVIDIA driver and cuDNN report on this machine: versions and GPUs, and
// whether labpose can use each GPU (compute capability 7.5 or newer, the oldest CUDA 13 supports,
// and a cuDNN that pairs with this build).
// Never throws for a missing driver or GPU: that is an answer ("no usable GPU: ..."), not an error.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace labpose::cuda {

/// The oldest compute capability this build supports (Turing; CUDA 13 dropped older GPUs).
constexpr int kMinimumMajor = 7, kMinimumMinor = 5;

struct GpuInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  std::size_t memory_bytes = 0;
  int multiprocessors = 0;
  bool supported() const {
    return major > kMinimumMajor || (major == kMinimumMajor && minor >= kMinimumMinor);
  }
};

struct CudaReport {
  int runtime_version = 0;        // e.g. 13000 for CUDA 13.0 (the runtime labpose was built with)
  int driver_version = 0;         // 0 when no NVIDIA driver is installed
  std::size_t cudnn_version = 0;  // 0 where cuDNN was not opened
  std::string cudnn_problem;      // why the GPUs cannot be used for want of cuDNN ("" if they can)
  std::vector<GpuInfo> gpus;      // every GPU the driver sees, usable or not
  std::string problem;            // why no GPU is usable, in words; empty when at least one is
};

CudaReport query_cuda();

/// Why GPU `index` cannot be used ("" when it can): no driver, no such GPU, too old, or no cuDNN
/// that pairs with this build.
std::string gpu_problem(const CudaReport& report, int index);

/// "13.0" from 13000.
std::string cuda_version_text(int version);

/// "9.19.0" from cuDNN's version number.
std::string cudnn_version_text(std::size_t version);

}  // namespace labpose::cuda
