// CUDA runtime / driver / cuDNN queries.
#include "cuda/device_query.hpp"

#include <cuda_runtime_api.h>

#include <fmt/core.h>

#include "cuda/cudnn_api.hpp"

namespace labpose::cuda {

std::string cuda_version_text(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

std::string cudnn_version_text(std::size_t version) {
  return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
}

CudaReport query_cuda() {
  CudaReport report;
  cudaRuntimeGetVersion(&report.runtime_version);
  cudaDriverGetVersion(&report.driver_version);
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (status == cudaErrorInsufficientDriver && report.driver_version == 0) {
      report.problem = "no NVIDIA driver is installed (libcuda.so.1 not found)";
    } else if (status == cudaErrorInsufficientDriver) {
      report.problem = fmt::format(
          "the NVIDIA driver supports CUDA {} but labpose was built with CUDA {}; "
          "update the driver",
          cuda_version_text(report.driver_version), cuda_version_text(report.runtime_version));
    } else if (status == cudaErrorNoDevice) {
      report.problem = "the NVIDIA driver is installed but sees no GPU";
    } else {
      report.problem = fmt::format("CUDA reports: {}", cudaGetErrorString(status));
    }
    cudaGetLastError();  // clear the sticky error state
    return report;
  }
  for (int index = 0; index < count; ++index) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) != cudaSuccess) continue;
    report.gpus.push_back({index, properties.name, properties.major, properties.minor,
                           properties.totalGlobalMem, properties.multiProcessorCount});
  }
  if (report.gpus.empty()) {
    report.problem = "the NVIDIA driver is installed but sees no GPU";
  } else {
    bool any_supported = false;
    for (const GpuInfo& gpu : report.gpus) any_supported = any_supported || gpu.supported();
    if (!any_supported) {
      report.problem = gpu_problem(report, 0);
    } else {
      // cuDNN is opened only where a GPU could use it.
      const CudnnLibrary& cudnn = cudnn_library();
      report.cudnn_version = cudnn.version;
      report.cudnn_problem = cudnn.problem;
      if (!cudnn.usable()) report.problem = cudnn.problem;
    }
  }
  return report;
}

std::string gpu_problem(const CudaReport& report, int index) {
  if (report.gpus.empty()) return report.problem;
  if (index < 0 || index >= static_cast<int>(report.gpus.size())) {
    return fmt::format("there is no GPU {} on this machine (it has {}: cuda:0 to cuda:{})", index,
                       report.gpus.size(), report.gpus.size() - 1);
  }
  const GpuInfo& gpu = report.gpus[static_cast<std::size_t>(index)];
  if (!gpu.supported()) {
    return fmt::format(
        "GPU {} ({}) has compute capability {}.{}; labpose needs {}.{} or newer (Turing, 2018, "
        "and later: CUDA 13 no longer supports older GPUs)",
        index, gpu.name, gpu.major, gpu.minor, kMinimumMajor, kMinimumMinor);
  }
  return report.cudnn_problem;
}

}  // namespace labpose::cuda
