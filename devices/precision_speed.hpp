// How fast this CPU computes a convolution in each precision it has: the figures behind `labpose
// doctor`'s choice of what to offer (int8 only where it clearly beats bf16). The precisions are
// timed in interleaved rounds, so that a burst of load hits them alike, and compared round by
// round: one noisy timing never decides. A short measurement (about a second), not a benchmark:
// `labpose bench` and tools/bench/ measure whole networks.
#pragma once

#include <optional>
#include <vector>

#include "nets/backend.hpp"

namespace labpose::devices {

/// One precision's GFLOP/s, a figure per round, and their median and spread.
struct MeasuredSpeed {
  std::vector<double> rounds;
  double median() const;
  double lowest() const;
  double highest() const;
};

/// GFLOP/s of one 3x3 convolution (128 to 128 channels, 60x80 pixels, batch 1: a ResNet-like
/// layer at analysis size, followed by a 1x1 convolution to 16 channels, 1.4 % of the work) through
/// a compiled CPU plan, counted as the direct convolution's multiply-adds (a Winograd layer does
/// fewer); nullopt for a precision this CPU does not run.
struct PrecisionSpeeds {
  MeasuredSpeed fp32;
  std::optional<MeasuredSpeed> bf16, int8;
};

/// `rounds` rounds; in each every precision the CPU runs is timed once (the fastest of a few
/// runs), in an order that turns from round to round. Without `with_int8`, fp32 and bf16 only.
PrecisionSpeeds measure_cpu_precision_speeds(int rounds = 7, bool with_int8 = true);

/// Whether `candidate` is faster than `baseline`, from rounds timed side by side.
struct SpeedComparison {
  enum class Verdict { faster, not_faster, within_noise };
  Verdict verdict = Verdict::within_noise;
  double ratio = 1.0;  // of the medians, candidate / baseline
  int wins = 0;        // rounds in which the candidate was the faster
  int rounds = 0;
};
/// Faster when the candidate wins at least 5 rounds in 6 and its median is 5 % above; not
/// faster when it wins at most 1 in 6 or its median is not above; else within noise.
SpeedComparison compare_speeds(const MeasuredSpeed& candidate, const MeasuredSpeed& baseline);

/// What --precision auto may take on this CPU, from speeds measured side by side: bf16 where it
/// has bf16 units and they are clearly faster than fp32 (compare_speeds: faster), else fp32, as
/// bf16 costs precision; and int8 on top where it is clearly faster than that, for analyses whose
/// int8 check on the project's labeled frames and videos passes (pipeline/analysis/int8_check.hpp).
struct CpuPrecisionChoice {
  nets::PlanPrecision without_int8 = nets::PlanPrecision::fp32;  // training, or int8 refused
  std::optional<SpeedComparison> bf16;  // against fp32; nullopt without bf16 units
  std::optional<SpeedComparison> int8;  // against without_int8; nullopt without VNNI
  bool int8_faster() const { return int8 && int8->verdict == SpeedComparison::Verdict::faster; }
};
CpuPrecisionChoice choose_cpu_precision(const PrecisionSpeeds& speeds);

/// choose_cpu_precision() on this CPU, measured once per process (7 rounds, int8 included); says
/// on the console when the bf16 units are passed over, and why.
const CpuPrecisionChoice& automatic_cpu_choice();

/// automatic_cpu_choice().without_int8: --precision auto's choice where int8 is not an option
/// (training; the backend registry's automatic precision of the cpu kind).
nets::PlanPrecision automatic_cpu_precision();

}  // namespace labpose::devices
