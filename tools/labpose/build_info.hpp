// What this build of labpose contains: the one place that knows which optional parts (the CUDA
// backend) were compiled in. Everything else asks here instead of testing macros.
#pragma once

#include <string>
#include <vector>

namespace labpose::tools {

struct GpuLine {
  std::string text;  // "0: NVIDIA H100 80GB HBM3, compute 9.0, 79.6 GiB, 132 SMs"
};

struct CudaSummary {
  bool compiled = false;
  std::string versions;  // "CUDA runtime 13.0, cuDNN 9.19.0"
  std::string driver;    // "580.65 (CUDA 13.0)" or "not installed"
  std::vector<GpuLine> gpus;
  std::string problem;  // why no GPU is usable
};

CudaSummary cuda_summary();

}  // namespace labpose::tools
