// --precision auto: on a GPU from the model's calibration, on the CPU from its int8 check.
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

CpuAnalysisChoice choose_cpu_analysis_precision(const devices::CpuPrecisionChoice& speed,
                                                const std::function<Int8Check()>& check_int8) {
  const nets::PlanPrecision others = speed.without_int8;
  if (!speed.int8) return {others, ""};
  if (!speed.int8_faster()) {
    return {others,
            fmt::format("{}: int8 is not clearly faster on this CPU ({:.2f}x {} on a 3x3 "
                        "convolution, faster in {} of {} rounds)",
                        nets::precision_name(others), speed.int8->ratio,
                        nets::precision_name(others), speed.int8->wins, speed.int8->rounds)};
  }
  const std::string faster = fmt::format("int8 is {:.1f}x {} on this CPU", speed.int8->ratio,
                                         nets::precision_name(others));
  Int8Check check;
  try {
    check = check_int8();
  } catch (const Error& error) {
    if (error.kind() == ErrorKind::interrupted) throw;
    return {others, fmt::format("{}: {}, but it could not be checked against fp32 ({})",
                                nets::precision_name(others), faster, error.what())};
  }
  if (!check.passed()) {
    return {others, fmt::format("{}: {}, but against fp32 it {}, beyond the bound of {} px "
                                "(median) and {} px (99th percentile)",
                                nets::precision_name(others), faster, check.text(),
                                kInt8MedianShiftBound, kInt8P99ShiftBound)};
  }
  return {nets::PlanPrecision::int8,
          fmt::format("inference plans in int8, not {}: {}, and against fp32 it {}, within {} px "
                      "(median) and {} px (99th percentile); --precision {} for more precision",
                      nets::precision_name(others), faster, check.text(), kInt8MedianShiftBound,
                      kInt8P99ShiftBound, nets::precision_name(others))};
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
  if (precision != nets::PlanPrecision::automatic) return backend;
  if (backend->host_memory()) {
    const CpuAnalysisChoice choice = choose_cpu_analysis_precision(
        devices::automatic_cpu_choice(), [&] { return int8_check(model); });
    if (!choice.why.empty()) console::info("--precision auto: {}", choice.why);
    if (choice.precision != nets::PlanPrecision::int8) return backend;
    return devices::make_backend(backend->name(), nets::PlanPrecision::int8);
  }
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
