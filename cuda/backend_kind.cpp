// The CUDA row: device queries through device_query.hpp, backends started as CudaBackend.
#include "cuda/backend_kind.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "cuda/backend.hpp"
#include "cuda/cudnn_api.hpp"
#include "cuda/device_query.hpp"
#include "cuda/nccl_communicator.hpp"

namespace labpose::cuda {
namespace {

DataType data_type(nets::PlanPrecision precision) {
  switch (precision) {
    case nets::PlanPrecision::fp16:
      return DataType::f16;
    case nets::PlanPrecision::bf16:
      return DataType::bf16;
    case nets::PlanPrecision::fp32:
    case nets::PlanPrecision::tf32:       // fp32 data (CudaOptions::tf32)
    case nets::PlanPrecision::int8:       // refused by make below
    case nets::PlanPrecision::automatic:  // resolved before a backend is made
      break;
  }
  return DataType::f32;
}

std::vector<nets::GpuCandidate> usable_gpus(std::string& why_none) {
  const CudaReport report = query_cuda();
  std::vector<nets::GpuCandidate> usable;
  for (const GpuInfo& gpu : report.gpus) {
    if (gpu.supported()) usable.push_back({gpu.index, gpu.name});
  }
  why_none = report.problem;
  return usable;
}

nets::GpuReport gpu_report() {
  const CudaReport report = query_cuda();
  nets::GpuReport summary;
  summary.compiled = true;
  // doctor opens cuDNN even without a GPU: a missing or mismatched cuDNN is worth knowing first.
  const CudnnLibrary& cudnn = cudnn_library();
  summary.versions = fmt::format(
      "CUDA runtime {}, {}", cuda_version_text(report.runtime_version),
      cudnn.usable() ? fmt::format("cuDNN {} ({})", cudnn_version_text(cudnn.version), cudnn.path)
                     : "no usable cuDNN: " + cudnn.problem);
  summary.driver = report.driver_version == 0
                       ? "not installed"
                       : fmt::format("supports CUDA {}", cuda_version_text(report.driver_version));
  for (const GpuInfo& gpu : report.gpus) {
    std::string text = fmt::format(
        "{}: {}, compute capability {}.{}, {:.1f} GiB, {} multiprocessors", gpu.index, gpu.name,
        gpu.major, gpu.minor, static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024.0 * 1024.0),
        gpu.multiprocessors);
    if (!gpu.supported()) text += " (not usable: " + gpu_problem(report, gpu.index) + ")";
    summary.gpus.push_back({gpu.index, text, gpu.supported()});
  }
  summary.problem = report.problem;
  return summary;
}

}  // namespace

nets::BackendKind backend_kind() {
  nets::BackendKind kind;
  kind.name = "cuda";
  kind.numbered = true;
  kind.reduced_precision = true;
  // Training's `auto`: TF32 products where the GPU has TF32 units, as PyTorch trains by default
  // (strict fp32 where it has none); inference plans keep fp32 unless asked.
  kind.automatic_training_precision = [](int) { return nets::PlanPrecision::tf32; };
  kind.problem = [](int index) { return gpu_problem(query_cuda(), index); };
  kind.candidates = usable_gpus;
  kind.tf32 = [](int index) {
    const CudaReport report = query_cuda();
    return index >= 0 && static_cast<std::size_t>(index) < report.gpus.size() &&
           report.gpus[static_cast<std::size_t>(index)].major >= 8;
  };
  kind.make = [](int index, nets::PlanPrecision precision) -> std::unique_ptr<nets::Backend> {
    if (precision == nets::PlanPrecision::int8) {
      throw UsageError(
          "int8 inference plans are the CPU's (VNNI); GPUs compute in fp32, fp16 or bf16",
          "use --precision fp16 or bf16 on a GPU, or --device cpu --precision int8");
    }
    return std::make_unique<CudaBackend>(
        CudaOptions{index, data_type(precision), precision == nets::PlanPrecision::tf32});
  };
  kind.report = gpu_report;
  kind.communicator = make_nccl_communicator;
  return kind;
}

}  // namespace labpose::cuda
