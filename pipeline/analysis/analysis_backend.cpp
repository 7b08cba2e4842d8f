// --precision auto on a GPU, from the model's calibration.
#include "pipeline/analysis/analysis_backend.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/predictor.hpp"
#include "pipeline/pose/int8_calibration.hpp"

namespace labpose::pipeline {
namespace {

HalfPrecisionChoice instead_of_fp16(bool bf16_available, const std::string& reason) {
  return {bf16_available ? nets::PlanPrecision::bf16 : nets::PlanPrecision::fp32,
          fmt::format("{}: {}", bf16_available ? "bf16" : "fp32 (this GPU has no bf16)", reason)};
}

}  // namespace

HalfPrecisionChoice choose_half_precision(const std::optional<nets::ActivationRanges>& ranges,
                                          bool bf16_available) {
  if (!ranges) {
    return instead_of_fp16(bf16_available,
                           "fp16's range could not be checked on the project's frames");
  }
  float largest = ranges->input, smallest = INFINITY;
  for (const float value : ranges->values) {
    largest = std::max(largest, value);
    if (value > 0.0F) smallest = std::min(smallest, value);  // an all-zero value is exact
  }
  if (largest > kFp16LargestValue) {
    return instead_of_fp16(
        bf16_available,
        fmt::format("the network's values reach {:.3g} on the project's frames, too near fp16's "
                    "largest, 65504",
                    largest));
  }
  if (smallest < kFp16SmallestLargest) {
    return instead_of_fp16(
        bf16_available,
        fmt::format("some of the network's values stay below {:.3g} on the project's frames, "
                    "where fp16 loses precision",
                    smallest));
  }
  return {nets::PlanPrecision::fp16,
          fmt::format("fp16: the network's values stay between {:.3g} and {:.3g} on the "
                      "project's frames, well inside fp16's range",
                      smallest, largest)};
}

std::optional<nets::ActivationRanges> model_ranges(const AnalysisModel& model,
                                                   std::string& why_not) {
  try {
    const auto cpu = devices::make_backend("cpu");
    const auto net = load_model_network(*cpu, model);
    const std::vector<std::filesystem::path> images =
        model.exported_folder.empty() ? calibration_images(model.snapshot, model.project)
                                      : std::vector<std::filesystem::path>{};
    return calibration_ranges(*net, model.snapshot, images);
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::interrupted) throw;
    why_not = error.what();
    return std::nullopt;
  }
}

std::unique_ptr<nets::Backend> make_analysis_backend(const std::string& device,
                                                     nets::PlanPrecision precision,
                                                     const AnalysisModel& model) {
  auto backend = devices::make_backend(device, precision);
  if (precision != nets::PlanPrecision::automatic || backend->host_memory()) return backend;
  // A GPU: its automatic precision is fp32; fp16 plans where the model's values allow, else
  // bf16 where the GPU has it. A backend is made only for the precision taken.
  std::string why_not;
  const auto ranges = model_ranges(model, why_not);
  if (!why_not.empty()) console::info("--precision auto: no calibration ({})", why_not);
  HalfPrecisionChoice choice = choose_half_precision(ranges, true);
  std::unique_ptr<nets::Backend> chosen;
  if (choice.precision == nets::PlanPrecision::bf16) {
    try {
      chosen = devices::make_backend(backend->name(), nets::PlanPrecision::bf16);
    } catch (const Error&) {
      // No bf16 units on this GPU (compute capability below 8.0): fp32.
      choice = choose_half_precision(ranges, false);
    }
  } else {
    chosen = devices::make_backend(backend->name(), nets::PlanPrecision::fp16);
  }
  console::info(
      "--precision auto: inference plans on {} in {} (--precision fp32 for full "
      "precision)",
      backend->name(), choice.why);
  return chosen != nullptr ? std::move(chosen) : std::move(backend);
}

}  // namespace labpose::pipeline
