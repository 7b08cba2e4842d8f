// The compiled-in backends.
#include "pipeline/devices.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include "core/console.hpp"
#include "core/error.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/ref/backend.hpp"

namespace labpose::pipeline {

std::vector<std::string> compiled_backends() {
  return {"ref", "cpu"};
}

std::unique_ptr<nets::Backend> make_backend(const std::string& device) {
  if (device == "cpu") return std::make_unique<nets::cpu::CpuBackend>();
  if (device == "ref") return std::make_unique<nets::ref::RefBackend>();
  if (device == "auto") {
    auto backend = std::make_unique<nets::cpu::CpuBackend>();
    console::info("device: cpu ({}); this build has no GPU backend", backend->description());
    return backend;
  }
  if (device == "cuda" || device.rfind("cuda:", 0) == 0) {
    throw Error(fmt::format("--device {}: this build of labpose has no CUDA backend", device),
                "use --device cpu, or build labpose on a machine with the CUDA toolkit and cuDNN "
                "(see labpose doctor)");
  }
  throw UsageError(fmt::format("unknown device \"{}\"", device),
                   fmt::format("use auto, cpu, cuda or cuda:N (this build has: {})",
                               fmt::join(compiled_backends(), ", ")));
}

}  // namespace labpose::pipeline
