// The compiled-in backends, device names, and the CUDA report for doctor. The only file with the
// CUDA build switch (LABPOSE_WITH_CUDA, set by pipeline/CMakeLists.txt when CUDA + cuDNN are
// found).
#include "pipeline/devices.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/console.hpp"
#include "core/error.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/random.hpp"
#include "nets/ref/backend.hpp"

#if LABPOSE_WITH_CUDA
#include "cuda/backend.hpp"
#include "cuda/device_query.hpp"
#endif

namespace labpose::pipeline {
namespace {

#if LABPOSE_WITH_CUDA
constexpr bool kWithCuda = true;
#else
constexpr bool kWithCuda = false;
#endif

// The N of "cuda" (0) or "cuda:N"; -1 when `device` does not name a GPU.
int cuda_index(const std::string& device) {
  if (device == "cuda") return 0;
  if (device.rfind("cuda:", 0) != 0) return -1;
  int index = -1;
  const char* begin = device.data() + 5;
  const char* end = device.data() + device.size();
  const auto [rest, error] = std::from_chars(begin, end, index);
  if (error != std::errc() || rest != end || begin == end || index < 0) {
    throw UsageError(fmt::format("unknown device \"{}\"", device),
                     "GPUs are named cuda (the first) or cuda:N with N = 0, 1, ...");
  }
  return index;
}

// The CPU for --device auto without a usable GPU (plans there are fp32 whatever was asked).
std::unique_ptr<nets::Backend> cpu_for_auto(PlanPrecision precision, const std::string& why) {
  auto backend = std::make_unique<nets::cpu::CpuBackend>();
  console::info("device: cpu ({}); {}{}", backend->description(), why,
                precision == PlanPrecision::fp32 ? "" : " (inference plans in fp32)");
  return backend;
}

#if LABPOSE_WITH_CUDA
cuda::DataType cuda_precision(PlanPrecision precision) {
  switch (precision) {
    case PlanPrecision::fp16:
      return cuda::DataType::f16;
    case PlanPrecision::bf16:
      return cuda::DataType::bf16;
    case PlanPrecision::fp32:
      break;
  }
  return cuda::DataType::f32;
}
#endif

}  // namespace

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names = {"ref", "cpu"};
  if (kWithCuda) names.emplace_back("cuda");
  return names;
}

PlanPrecision parse_plan_precision(const std::string& text) {
  if (text == "fp32") return PlanPrecision::fp32;
  if (text == "fp16") return PlanPrecision::fp16;
  if (text == "bf16") return PlanPrecision::bf16;
  throw UsageError(fmt::format("unknown precision \"{}\"", text), "use fp32, fp16 or bf16");
}

std::string device_problem(const std::string& device) {
  const int index = cuda_index(device);
  if (index < 0) return {};
#if LABPOSE_WITH_CUDA
  return cuda::gpu_problem(cuda::query_cuda(), index);
#else
  return "this build of labpose has no CUDA backend";
#endif
}

std::unique_ptr<nets::Backend> make_backend(const std::string& device, PlanPrecision precision) {
  if ((device == "cpu" || device == "ref") && precision != PlanPrecision::fp32) {
    throw UsageError(fmt::format("--device {} computes in fp32; fp16 and bf16 need a GPU", device),
                     "leave out --precision, or use --device cuda");
  }
  if (device == "cpu") return std::make_unique<nets::cpu::CpuBackend>();
  if (device == "ref") return std::make_unique<nets::ref::RefBackend>();
  if (device == "auto") {
#if LABPOSE_WITH_CUDA
    const cuda::CudaReport report = cuda::query_cuda();
    for (const cuda::GpuInfo& gpu : report.gpus) {
      if (!gpu.supported()) continue;
      try {
        auto backend = std::make_unique<cuda::CudaBackend>(
            cuda::CudaOptions{gpu.index, cuda_precision(precision)});
        console::info("device: {} ({})", backend->name(), backend->description());
        return backend;
      } catch (const Error& error) {
        console::warn("cannot start GPU cuda:{} ({}): {}; using the CPU", gpu.index, gpu.name,
                      error.what());
        break;
      }
    }
    return cpu_for_auto(
        precision, "no usable GPU: " + (report.problem.empty() ? std::string("see labpose doctor")
                                                               : report.problem));
#else
    return cpu_for_auto(precision, "this build has no GPU backend");
#endif
  }
  const int index = cuda_index(device);
  if (index >= 0) {
#if LABPOSE_WITH_CUDA
    const std::string problem = cuda::gpu_problem(cuda::query_cuda(), index);
    if (!problem.empty()) {
      throw Error(fmt::format("--device {}: no usable GPU: {}", device, problem),
                  "run `labpose doctor` for the GPUs and drivers of this machine, or use "
                  "--device cpu");
    }
    return std::make_unique<cuda::CudaBackend>(cuda::CudaOptions{index, cuda_precision(precision)});
#else
    throw Error(fmt::format("--device {}: this build of labpose has no CUDA backend", device),
                "use --device cpu, or build labpose on a machine with the CUDA toolkit and cuDNN "
                "(see labpose doctor)");
#endif
  }
  throw UsageError(fmt::format("unknown device \"{}\"", device),
                   fmt::format("use auto, cpu, cuda or cuda:N (this build has: {})",
                               fmt::join(compiled_backends(), ", ")));
}

CudaSummary cuda_summary() {
  CudaSummary summary;
#if LABPOSE_WITH_CUDA
  const cuda::CudaReport report = cuda::query_cuda();
  summary.compiled = true;
  summary.versions =
      fmt::format("CUDA runtime {}, cuDNN {}", cuda::cuda_version_text(report.runtime_version),
                  cuda::cudnn_version_text(report.cudnn_version));
  summary.driver =
      report.driver_version == 0
          ? "not installed"
          : fmt::format("supports CUDA {}", cuda::cuda_version_text(report.driver_version));
  for (const cuda::GpuInfo& gpu : report.gpus) {
    std::string text = fmt::format(
        "{}: {}, compute capability {}.{}, {:.1f} GiB, {} multiprocessors", gpu.index, gpu.name,
        gpu.major, gpu.minor, static_cast<double>(gpu.memory_bytes) / (1024.0 * 1024.0 * 1024.0),
        gpu.multiprocessors);
    if (!gpu.supported()) text += " (not usable: " + cuda::gpu_problem(report, gpu.index) + ")";
    summary.gpus.push_back({gpu.index, text, gpu.supported()});
  }
  summary.problem = report.problem;
#else
  summary.problem = "this build has no CUDA backend (built without the CUDA toolkit and cuDNN)";
#endif
  return summary;
}

ConvolutionCheck check_convolution(const std::string& device) {
  const nets::Shape x_shape{2, 16, 20, 24}, w_shape{32, 16, 3, 3};
  const nets::ConvGeometry geometry = nets::ConvGeometry::symmetric(1, 1);
  const nets::Shape y_shape = nets::conv2d_output_shape(x_shape, w_shape, geometry);
  nets::Random random(2024);
  const auto values = [&](std::int64_t count) {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (float& value : v) value = static_cast<float>(2.0 * random.uniform() - 1.0);
    return v;
  };
  const auto x = values(x_shape.elements()), w = values(w_shape.elements()),
             bias = values(w_shape[0]);
  std::vector<float> outputs[2];
  const std::string devices[2] = {"cpu", device};
  for (int k = 0; k < 2; ++k) {
    auto backend = make_backend(devices[k]);
    nets::Tensor tx = backend->allocate(x_shape), ty = backend->allocate(y_shape);
    nets::Tensor tw = backend->allocate_flat(w_shape.elements()).reshaped(w_shape);
    nets::Tensor tb = backend->allocate(nets::Shape{w_shape[0]});
    backend->copy_from_host(x.data(), tx);
    backend->copy_from_host(w.data(), tw);
    backend->copy_from_host(bias.data(), tb);
    backend->conv2d_forward(tx, tw, tb, ty, geometry);
    outputs[k].resize(static_cast<std::size_t>(y_shape.elements()));
    backend->copy_to_host(ty, outputs[k].data());
  }
  ConvolutionCheck check;
  for (std::size_t i = 0; i < outputs[0].size(); ++i) {
    check.max_magnitude = std::max(check.max_magnitude, std::abs(double{outputs[0][i]}));
    const double difference = std::abs(double{outputs[1][i]} - double{outputs[0][i]});
    check.max_difference =
        std::isnan(difference) ? HUGE_VAL : std::max(check.max_difference, difference);
  }
  return check;
}

}  // namespace labpose::pipeline
