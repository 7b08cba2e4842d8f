// How fast this CPU computes a convolution in each precision it has: the figures behind `labpose
// doctor`'s choice of what to offer (int8 only where it beats bf16). A short measurement (well
// under a second), not a benchmark: `labpose bench` and tools/bench/ measure whole networks.
#pragma once

#include <optional>

namespace labpose::devices {

/// GFLOP/s of one 3x3 convolution (128 to 128 channels, 60x80 pixels, batch 1: a ResNet-like
/// layer at analysis size, followed by a 1x1 convolution to 16 channels, 1.4 % of the work) through
/// a compiled CPU plan, the fastest of a few runs, counted as the direct convolution's
/// multiply-adds (a Winograd layer does fewer); nullopt for a precision this CPU does not run.
struct PrecisionSpeeds {
  double fp32 = 0.0;
  std::optional<double> bf16, int8;
};
PrecisionSpeeds measure_cpu_precision_speeds();

}  // namespace labpose::devices
