// What the CUDA runtime, the NVIDIA driver and cuDNN report on this machine: versions and GPUs.
// Never throws for a missing driver or GPU: that is an answer ("no usable GPU: ..."), not an error.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace labpose::cuda {

struct GpuInfo {
  int index = 0;
  std::string name;
  int major = 0, minor = 0;  // compute capability
  std::size_t memory_bytes = 0;
  int multiprocessors = 0;
};

struct CudaReport {
  int runtime_version = 0;  // e.g. 13000 for CUDA 13.0 (the runtime labpose was built with)
  int driver_version = 0;   // 0 when no NVIDIA driver is installed
  std::size_t cudnn_version = 0;
  std::vector<GpuInfo> gpus;
  std::string problem;  // why no GPU is usable, in words; empty when at least one is
};

CudaReport query_cuda();

/// "13.0" from 13000.
std::string cuda_version_text(int version);

}  // namespace labpose::cuda
