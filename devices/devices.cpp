// Device names parsed and resolved against the registry's rows; --device auto's choice; doctor's
// CUDA report and convolution check.
#include "devices/devices.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/registry.hpp"
#include "nets/random.hpp"

namespace labpose::devices {
namespace {

// A device name split into its kind and, for GPU kinds, the N of "<kind>" (0) or "<kind>:N".
struct DeviceName {
  const nets::BackendKind* kind = nullptr;
  int index = 0;
};

[[noreturn]] void unknown_device(const std::string& device) {
  throw UsageError(fmt::format("unknown device \"{}\"", device),
                   fmt::format("use auto, cpu, cuda or cuda:N (this build has: {})",
                               fmt::join(compiled_backends(), ", ")));
}

// Null kind when `device` names no kind of the table.
DeviceName parse_device(const std::string& device) {
  const std::size_t colon = device.find(':');
  DeviceName parsed{find_kind(device.substr(0, colon)), 0};
  if (parsed.kind == nullptr || colon == std::string::npos) return parsed;
  if (!parsed.kind->numbered) unknown_device(device);
  const char* begin = device.data() + colon + 1;
  const char* end = device.data() + device.size();
  const auto [rest, error] = std::from_chars(begin, end, parsed.index);
  if (error != std::errc() || rest != end || begin == end || parsed.index < 0) {
    throw UsageError(fmt::format("unknown device \"{}\"", device),
                     fmt::format("GPUs are named {0} (the first) or {0}:N with N = 0, 1, ...",
                                 parsed.kind->name));
  }
  return parsed;
}

// `precision` on device `index` of `kind`: --precision auto resolved to the kind's choice for
// `purpose`, and tf32 to fp32 where the device has no TF32 units (it is fp32 with faster products,
// not a request the device could refuse).
PlanPrecision resolved(const nets::BackendKind& kind, int index, PlanPrecision precision,
                       Purpose purpose = Purpose::inference) {
  if (precision == PlanPrecision::automatic) {
    if (purpose == Purpose::training && kind.automatic_training_precision)
      precision = kind.automatic_training_precision(index);
    else
      precision = kind.automatic_precision ? kind.automatic_precision(index) : PlanPrecision::fp32;
  }
  if (precision == PlanPrecision::tf32)
    return kind.tf32 && kind.tf32(index) ? precision : PlanPrecision::fp32;
  return precision;
}

// Says what --precision auto picked when it is not fp32.
void say_automatic_choice(PlanPrecision asked, const nets::Backend& backend, PlanPrecision chosen,
                          Purpose purpose) {
  if (asked != PlanPrecision::automatic || chosen == PlanPrecision::fp32) return;
  if (purpose == Purpose::training) {
    console::info(
        "precision auto: training on {} in {} (precision: fp32 in pose_cfg.yaml for "
        "full precision)",
        backend.name(), nets::precision_name(chosen));
    return;
  }
  console::info(
      "--precision auto: inference plans on {} in {} (--precision fp32 for full "
      "precision)",
      backend.name(), nets::precision_name(chosen));
}

// The CPU for --device auto without a usable GPU: fp16 becomes fp32, and bf16 too where the CPU
// has no bf16 units.
std::unique_ptr<nets::Backend> cpu_for_auto(PlanPrecision precision, const std::string& why,
                                            Purpose purpose) {
  const nets::BackendKind& cpu = *find_kind("cpu");
  PlanPrecision chosen = resolved(cpu, 0, precision, purpose);
  const bool lowered =
      chosen == PlanPrecision::fp16 ||
      (chosen == PlanPrecision::bf16 && resolved(cpu, 0, PlanPrecision::automatic) != chosen);
  if (lowered) chosen = PlanPrecision::fp32;
  auto backend = cpu.make(0, chosen);
  console::info("device: cpu ({}); {}{}", backend->description(), why,
                lowered ? fmt::format(" (--precision {} needs a GPU or bf16 units here)",
                                      nets::precision_name(precision))
                        : std::string());
  say_automatic_choice(precision, *backend, chosen, purpose);
  return backend;
}

// --device auto: the first usable GPU of a compiled GPU kind that starts (each is tried in turn,
// and each that will not start says why), else the CPU.
std::unique_ptr<nets::Backend> automatic_backend(PlanPrecision precision, Purpose purpose) {
  std::string why = "this build has no GPU backend";
  for (const nets::BackendKind& kind : backend_kinds()) {
    if (!kind.compiled || !kind.numbered) continue;
    std::string why_none;
    const std::vector<nets::GpuCandidate> gpus = kind.candidates(why_none);
    for (const nets::GpuCandidate& gpu : gpus) {
      try {
        const PlanPrecision chosen = resolved(kind, gpu.index, precision, purpose);
        auto backend = kind.make(gpu.index, chosen);
        console::info("device: {} ({})", backend->name(), backend->description());
        say_automatic_choice(precision, *backend, chosen, purpose);
        return backend;
      } catch (const Error& error) {
        console::warn("cannot start GPU {}:{} ({}): {}; {}", kind.name, gpu.index, gpu.name,
                      error.what(), &gpu == &gpus.back() ? "using the CPU" : "trying the next");
        why_none = fmt::format("{}:{} would not start", kind.name, gpu.index);
      }
    }
    why = "no usable GPU: " + (why_none.empty() ? std::string("see labpose doctor") : why_none);
  }
  return cpu_for_auto(precision, why, purpose);
}

}  // namespace

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names;
  for (const nets::BackendKind& kind : backend_kinds()) {
    if (kind.compiled) names.push_back(kind.name);
  }
  return names;
}

PlanPrecision parse_plan_precision(const std::string& text) {
  for (const PlanPrecision precision :
       {PlanPrecision::automatic, PlanPrecision::fp32, PlanPrecision::bf16, PlanPrecision::int8,
        PlanPrecision::fp16, PlanPrecision::tf32}) {
    if (text == nets::precision_name(precision)) return precision;
  }
  throw UsageError(fmt::format("unknown precision \"{}\"", text),
                   "use auto (bf16 where the device computes it natively, else fp32), fp32, bf16, "
                   "int8 (a CPU with VNNI), fp16 (GPUs) or tf32 (fp32 on a GPU's TF32 tensor "
                   "cores)");
}

std::string device_problem(const std::string& device) {
  const DeviceName parsed = parse_device(device);
  if (parsed.kind == nullptr || !parsed.kind->numbered) return {};
  return parsed.kind->problem(parsed.index);
}

DeviceKind device_kind(const std::string& device) {
  if (device == "auto") {
    for (const nets::BackendKind& kind : backend_kinds()) {
      std::string why_none;
      if (kind.compiled && kind.numbered && !kind.candidates(why_none).empty())
        return {kind.name, true};
    }
    return {"cpu", false};
  }
  const DeviceName parsed = parse_device(device);
  if (parsed.kind == nullptr) unknown_device(device);
  return {parsed.kind->name, parsed.kind->numbered};
}

std::unique_ptr<nets::Backend> make_backend(const std::string& device, PlanPrecision precision,
                                            Purpose purpose) {
  if (device == "auto") return automatic_backend(precision, purpose);
  const DeviceName parsed = parse_device(device);
  if (parsed.kind == nullptr) unknown_device(device);
  const nets::BackendKind& kind = *parsed.kind;
  const PlanPrecision chosen = resolved(kind, parsed.index, precision, purpose);
  if (!kind.reduced_precision && kind.compiled && chosen != PlanPrecision::fp32) {
    throw UsageError(fmt::format("--device {} computes in fp32 only", device),
                     "leave out --precision, or use --device cpu (bf16 on a CPU with bf16 units) "
                     "or cuda");
  }
  if (!kind.compiled) {
    throw Error(fmt::format("--device {}: {}", device, kind.problem(parsed.index)),
                "use --device cpu, or build labpose on a machine with the CUDA toolkit and cuDNN "
                "(see labpose doctor)");
  }
  if (const std::string problem = kind.problem(parsed.index); !problem.empty()) {
    throw Error(fmt::format("--device {}: no usable GPU: {}", device, problem),
                "run `labpose doctor` for the GPUs and drivers of this machine, or use "
                "--device cpu");
  }
  auto backend = kind.make(parsed.index, chosen);
  say_automatic_choice(precision, *backend, chosen, purpose);
  return backend;
}

CudaSummary cuda_summary() {
  return find_kind("cuda")->report();
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
  const std::string names[2] = {"cpu", device};
  for (int k = 0; k < 2; ++k) {
    auto backend = make_backend(names[k]);
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

}  // namespace labpose::devices
