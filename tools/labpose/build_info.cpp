// Compiled-in optional parts. The only `#if` on build options in the project.
#include "tools/labpose/build_info.hpp"

#include <fmt/core.h>

#if LABPOSE_WITH_CUDA
#include "cuda/device_query.hpp"
#endif

namespace labpose::tools {

CudaSummary cuda_summary() {
  CudaSummary summary;
#if LABPOSE_WITH_CUDA
  const cuda::CudaReport report = cuda::query_cuda();
  summary.compiled = true;
  summary.versions =
      fmt::format("CUDA runtime {}, cuDNN {}.{}.{}",
                  cuda::cuda_version_text(report.runtime_version), report.cudnn_version / 10000,
                  (report.cudnn_version % 10000) / 100, report.cudnn_version % 100);
  summary.driver =
      report.driver_version == 0
          ? "not installed"
          : fmt::format("supports CUDA {}", cuda::cuda_version_text(report.driver_version));
  for (const auto& gpu : report.gpus) {
    summary.gpus.push_back({fmt::format(
        "{}: {}, compute capability {}.{}, {:.1f} GiB, {} multiprocessors", gpu.index, gpu.name,
        gpu.major, gpu.minor, static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024.0 * 1024.0),
        gpu.multiprocessors)});
  }
  summary.problem = report.problem;
#else
  summary.problem = "this build has no CUDA backend (built without the CUDA toolkit and cuDNN)";
#endif
  return summary;
}

}  // namespace labpose::tools
