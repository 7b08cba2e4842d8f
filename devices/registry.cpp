// The table of backends. A new backend is one row here and its own library.
#include "devices/registry.hpp"

#include "devices/precision_speed.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/ref/backend.hpp"

#if LABPOSE_WITH_CUDA
#include "cuda/backend_kind.hpp"
#endif

namespace labpose::devices {
namespace {

nets::BackendKind host_kind(const std::string& name) {
  nets::BackendKind kind;
  kind.name = name;
  kind.problem = [](int) { return std::string(); };
  kind.candidates = [](std::string&) { return std::vector<nets::GpuCandidate>(); };
  return kind;
}

// The reference loops: fp32 only.
nets::BackendKind ref_kind() {
  nets::BackendKind kind = host_kind("ref");
  kind.make = [](int, nets::PlanPrecision) -> std::unique_ptr<nets::Backend> {
    return std::make_unique<nets::ref::RefBackend>();
  };
  return kind;
}

// The CPU: fp32, and bf16 where it has bf16 units (auto's choice where they are clearly faster).
nets::BackendKind cpu_kind() {
  nets::BackendKind kind = host_kind("cpu");
  kind.reduced_precision = true;
  kind.automatic_precision = [](int) { return automatic_cpu_precision(); };
  kind.make = [](int, nets::PlanPrecision precision) -> std::unique_ptr<nets::Backend> {
    return std::make_unique<nets::cpu::CpuBackend>(precision);
  };
  return kind;
}

// The row of a GPU kind this build was made without: every question answers why.
[[maybe_unused]] nets::BackendKind missing_gpu_kind(const std::string& name,
                                                    const std::string& why) {
  nets::BackendKind kind;
  kind.name = name;
  kind.compiled = false;
  kind.numbered = true;
  kind.problem = [why](int) { return why; };
  kind.candidates = [why](std::string& why_none) {
    why_none = why;
    return std::vector<nets::GpuCandidate>();
  };
  kind.report = [why]() {
    nets::GpuReport report;
    report.problem = "this build has no CUDA backend (built without the CUDA toolkit and cuDNN)";
    return report;
  };
  return kind;
}

}  // namespace

const std::vector<nets::BackendKind>& backend_kinds() {
  static const std::vector<nets::BackendKind> kinds = {
    ref_kind(),
    cpu_kind(),
#if LABPOSE_WITH_CUDA
    cuda::backend_kind(),
#else
    missing_gpu_kind("cuda", "this build of labpose has no CUDA backend"),
#endif
  };
  return kinds;
}

const nets::BackendKind* find_kind(const std::string& name) {
  for (const nets::BackendKind& kind : backend_kinds()) {
    if (kind.name == name) return &kind;
  }
  return nullptr;
}

}  // namespace labpose::devices
