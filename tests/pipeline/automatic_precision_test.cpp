// --precision auto on the CPU: int8 only where it is clearly faster and the model's int8 check on
// its labeled frames and its project's videos passes; the check is run only when int8 is faster; a
// failed or impossible check keeps the other precision and says why. Speeds and checks are made up
// here: the measurement is devices' PrecisionSpeed.*, the check on a trained model
// ReducedPrecision.*.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "pipeline/analysis/analysis_backend.hpp"

namespace labpose::pipeline {
namespace {

using nets::PlanPrecision;
using Verdict = devices::SpeedComparison::Verdict;

devices::CpuPrecisionChoice speeds(PlanPrecision without_int8, std::optional<Verdict> int8) {
  devices::CpuPrecisionChoice choice;
  choice.without_int8 = without_int8;
  if (int8) choice.int8 = devices::SpeedComparison{*int8, 2.5, 7, 7};
  return choice;
}

Int8Check check_with(double median, double p99, std::size_t confident = 200) {
  Int8Check check;
  check.images = 60;
  check.shift.confident = {median, p99, p99 + 1.0, confident};
  check.shift.all = {median, 20.0, 200.0, confident + 40};
  return check;
}

TEST(AutomaticCpuPrecision, Int8WhereClearlyFasterAndWithinTheBounds) {
  int checks = 0;
  const auto passing = [&] {
    ++checks;
    return check_with(0.25, 2.1);
  };
  CpuAnalysisChoice choice =
      choose_cpu_analysis_precision(speeds(PlanPrecision::fp32, Verdict::faster), passing);
  EXPECT_EQ(choice.precision, PlanPrecision::int8);
  EXPECT_NE(choice.why.find("2.5x fp32"), std::string::npos) << choice.why;
  EXPECT_NE(choice.why.find("0.25 px (median)"), std::string::npos) << choice.why;
  EXPECT_NE(choice.why.find("--precision fp32 for more precision"), std::string::npos)
      << choice.why;
  EXPECT_EQ(checks, 1);
  // Over bf16 as well, where bf16 is auto's other choice.
  choice = choose_cpu_analysis_precision(speeds(PlanPrecision::bf16, Verdict::faster), passing);
  EXPECT_EQ(choice.precision, PlanPrecision::int8);
  EXPECT_NE(choice.why.find("2.5x bf16"), std::string::npos) << choice.why;
  // The device's line before it said bf16: this one says int8 replaces it.
  EXPECT_EQ(choice.why.rfind("inference plans in int8, not bf16: ", 0), 0U) << choice.why;
  // Exactly at the bounds passes.
  choice = choose_cpu_analysis_precision(speeds(PlanPrecision::fp32, Verdict::faster), [] {
    return check_with(kInt8MedianShiftBound, kInt8P99ShiftBound);
  });
  EXPECT_EQ(choice.precision, PlanPrecision::int8);
}

TEST(AutomaticCpuPrecision, NoCheckWhereInt8IsNotClearlyFaster) {
  int checks = 0;
  const auto counted = [&] {
    ++checks;
    return check_with(0.1, 0.5);
  };
  for (const auto verdict : {Verdict::not_faster, Verdict::within_noise}) {
    const CpuAnalysisChoice choice =
        choose_cpu_analysis_precision(speeds(PlanPrecision::bf16, verdict), counted);
    EXPECT_EQ(choice.precision, PlanPrecision::bf16);
    EXPECT_NE(choice.why.find("int8 is not clearly faster on this CPU (2.50x bf16"),
              std::string::npos)
        << choice.why;
  }
  // A CPU without VNNI.
  const CpuAnalysisChoice choice =
      choose_cpu_analysis_precision(speeds(PlanPrecision::fp32, std::nullopt), counted);
  EXPECT_EQ(choice.precision, PlanPrecision::fp32);
  EXPECT_EQ(choice.why, "");
  EXPECT_EQ(checks, 0) << "the check costs two passes over the frames: only when int8 is faster";
}

TEST(AutomaticCpuPrecision, AShiftBeyondEitherBoundKeepsTheOtherPrecision) {
  const auto fast = speeds(PlanPrecision::bf16, Verdict::faster);
  CpuAnalysisChoice choice =
      choose_cpu_analysis_precision(fast, [] { return check_with(0.51, 1.0); });
  EXPECT_EQ(choice.precision, PlanPrecision::bf16);
  EXPECT_NE(choice.why.find("beyond the bound"), std::string::npos) << choice.why;
  EXPECT_NE(choice.why.find("0.51 px (median)"), std::string::npos) << choice.why;
  choice = choose_cpu_analysis_precision(fast, [] { return check_with(0.2, 3.2); });
  EXPECT_EQ(choice.precision, PlanPrecision::bf16);
  EXPECT_NE(choice.why.find("3.20 px (99th percentile)"), std::string::npos) << choice.why;
  // Within the bounds on the labeled frames, beyond them on the videos' frames: no int8.
  choice = choose_cpu_analysis_precision(fast, [] {
    Int8Check check = check_with(0.3, 2.3);
    check.video_frames = 64;
    check.videos = {{"m3v1mp4.mp4", 1000}};
    check.video_shift.confident = {0.47, 3.75, 9.0, 250};
    return check;
  });
  EXPECT_EQ(choice.precision, PlanPrecision::bf16);
  EXPECT_NE(choice.why.find("and 0.47 px and 3.75 px over the 250 on 64 frames of the project's "
                            "video, beyond the bound"),
            std::string::npos)
      << choice.why;
  // Videos where nothing reaches pcutoff say nothing about int8: the labeled frames decide.
  choice = choose_cpu_analysis_precision(fast, [] {
    Int8Check check = check_with(0.3, 2.3);
    check.video_frames = 64;
    check.videos = {{"a.mp4", 1}, {"b.mp4", 2}};
    return check;
  });
  EXPECT_EQ(choice.precision, PlanPrecision::int8);
  EXPECT_NE(choice.why.find("none reached pcutoff on 64 frames of the project's videos"),
            std::string::npos)
      << choice.why;
  // No confident keypoint at all: nothing says int8 is close, so no int8.
  choice = choose_cpu_analysis_precision(fast, [] { return check_with(0.0, 0.0, 0); });
  EXPECT_EQ(choice.precision, PlanPrecision::bf16);
  EXPECT_NE(choice.why.find("no keypoint reached pcutoff"), std::string::npos) << choice.why;
}

TEST(AutomaticCpuPrecision, ACheckThatCannotRunKeepsTheOtherPrecisionAndSaysWhy) {
  const CpuAnalysisChoice choice = choose_cpu_analysis_precision(
      speeds(PlanPrecision::fp32, Verdict::faster), []() -> Int8Check {
        throw Error(
            "snapshot-9.safetensors cannot be checked in int8: an exported model carries "
            "no labeled frames");
      });
  EXPECT_EQ(choice.precision, PlanPrecision::fp32);
  EXPECT_NE(choice.why.find("could not be checked"), std::string::npos) << choice.why;
  EXPECT_NE(choice.why.find("exported model"), std::string::npos) << choice.why;
  // An interruption is not a failed check: it stops the run.
  EXPECT_THROW(choose_cpu_analysis_precision(
                   speeds(PlanPrecision::fp32, Verdict::faster),
                   []() -> Int8Check { throw Error("interrupted", "", ErrorKind::interrupted); }),
               Error);
}

}  // namespace
}  // namespace labpose::pipeline
