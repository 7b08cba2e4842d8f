// The backend analysis runs a model on: the device asked for, with --precision auto resolved for
// that model. On a GPU, auto means fp16 plans where the model's values on the project's own labeled
// frames (its calibration, measured once) sit well inside fp16's range, else bf16 (fp32 where the
// GPU has no bf16). On the CPU, fp32 or bf16 as devices::make_backend decides by speed, or int8
// where that is clearly faster still and the model's int8 check on its labeled frames passes
// (int8_check.hpp). Not training's precision.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "devices/precision_speed.hpp"
#include "nets/backend.hpp"
#include "nets/fused_graph.hpp"
#include "pipeline/analysis/int8_check.hpp"
#include "pipeline/analysis/model_choice.hpp"

namespace labpose::pipeline {

/// The most a value may reach on the project's frames for fp16: a quarter of fp16's largest
/// (65504), as frames beyond the labeled ones reach further.
constexpr float kFp16LargestValue = 16384.0F;
/// The least an op's largest value may be for fp16: values down to a thousandth of it still have
/// fp16's full precision (its normal numbers start at 2^-14).
constexpr float kFp16SmallestLargest = 1.0F / 16.0F;

/// What --precision auto's fp16 on a GPU becomes for a model.
struct HalfPrecisionChoice {
  nets::PlanPrecision precision = nets::PlanPrecision::fp16;
  std::string why;  // in words, for the console
};

/// fp16 when every value of `ranges` (nullopt: not measured) lies within fp16's range with the
/// margins above; else bf16 where `bf16_available`, else fp32.
HalfPrecisionChoice choose_half_precision(const std::optional<nets::ActivationRanges>& ranges,
                                          bool bf16_available);

/// The ranges of `model`'s values on its project's training images (its calibration; nullopt and
/// `why_not` where it has none, as an exported model without one).
std::optional<nets::ActivationRanges> model_ranges(const AnalysisModel& model,
                                                   std::string& why_not);

/// What --precision auto analyzes in on the CPU.
struct CpuAnalysisChoice {
  nets::PlanPrecision precision = nets::PlanPrecision::fp32;
  std::string why;  // in words, for the console; "" on a CPU without int8 (VNNI)
};

/// int8 where `speed` says it is clearly faster than the CPU's other automatic precision and
/// `check_int8` (called only then: it may measure) passes; else that other precision, saying
/// why not int8. An Error from `check_int8` means no int8, with its message.
CpuAnalysisChoice choose_cpu_analysis_precision(const devices::CpuPrecisionChoice& speed,
                                                const std::function<Int8Check()>& check_int8);

/// A backend for analyzing with `model` on `device` in `precision`; --precision auto is checked
/// against the model's ranges (a GPU) or its int8 check (the CPU) and says what it chose and why.
std::unique_ptr<nets::Backend> make_analysis_backend(const std::string& device,
                                                     nets::PlanPrecision precision,
                                                     const AnalysisModel& model);

}  // namespace labpose::pipeline
