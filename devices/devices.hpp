// Device choice for every command (--device auto|cpu|cuda|cuda:N, and ref for tests) over the
// backend registry (registry.hpp). Asking for a device that is not there or not usable is an error
// that says why; nothing is silently substituted.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "nets/backend_kind.hpp"

namespace labpose::devices {

using nets::PlanPrecision;
using CudaSummary = nets::GpuReport;

/// The backends compiled into this build: "ref", "cpu" (and "cuda" when built with CUDA).
std::vector<std::string> compiled_backends();

/// What a backend is made for: `auto` may resolve differently for training (tf32 on a GPU).
enum class Purpose { inference, training };

/// "auto", "fp32", "bf16" or "fp16"; a UsageError otherwise.
PlanPrecision parse_plan_precision(const std::string& text);

/// A backend for `device`: "cpu", "ref" (the slow reference, for checks), "cuda", "cuda:N", or
/// "auto" (the first usable GPU, else the CPU; the choice is logged). Its inference plans compute
/// in `precision`; PlanPrecision::automatic picks bf16 on a CPU with bf16 units, else fp32, and
/// says so when it is not fp32. Throws a UsageError for an unknown name or a precision the device
/// never computes, and an Error when the device is not usable, saying why (no driver, no GPU,
/// compute capability too old, no CUDA in this build, no bf16 units). For Purpose::training,
/// automatic resolves to the kind's automatic_training_precision (a GPU's: tf32).
std::unique_ptr<nets::Backend> make_backend(const std::string& device,
                                            PlanPrecision precision = PlanPrecision::fp32,
                                            Purpose purpose = Purpose::inference);

/// Why `device` cannot be used on this machine, or "" when it can (tests skip with this text).
std::string device_problem(const std::string& device);

/// The kind of device that `device` names here, worked out without starting it: its row's name
/// ("ref", "cpu", "cuda") and whether it is a GPU kind (tensors in device memory). auto is the
/// first GPU kind with a usable GPU, as make_backend's choice, else the CPU. A UsageError for an
/// unknown name.
struct DeviceKind {
  std::string name;
  bool gpu = false;
};
DeviceKind device_kind(const std::string& device);

/// What `labpose doctor` shows about CUDA.
CudaSummary cuda_summary();

/// The same small convolution (random inputs, fixed seed) on `device` and on the CPU backend.
struct ConvolutionCheck {
  double max_difference = 0.0;  // largest |device - cpu| over the outputs
  double max_magnitude = 0.0;   // largest |cpu| output, for scale
  bool agrees() const { return max_difference <= 1e-4 * std::max(1.0, max_magnitude); }
};
ConvolutionCheck check_convolution(const std::string& device);

}  // namespace labpose::devices
