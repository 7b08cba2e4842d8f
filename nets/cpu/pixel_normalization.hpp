// A plan's first step: the frames' fp32 pixels (NHWC) normalized by the network's per-channel
// scale and shift into the plan's type. Its loop is written per channel, and on 3 channels it ran
// scalar: 1.26 ms of resnet_50's 42 ms bf16 frame at 640×480 on a 2-core AMX Xeon, as long as a
// convolution. Here a block of 256 pixels is one flat run of 256 · C values with its scales and
// shifts repeated to match, which the compiler vectorizes, for AVX-512, AVX2 or the baseline
// (target_clones: the CPU picks).
#pragma once

#include <cstdint>
#include <vector>

namespace labpose::nets::cpu {

/// What PixelNormalization writes: fp32, bf16 bit patterns (rounded to nearest, ties to even), or
/// int8 steps (rounded to nearest, ties to even, saturated).
enum class NormalizedType { f32, bf16, s8 };

class PixelNormalization {
 public:
  /// y[p, c] = x[p, c] · scale[c] + shift[c] (a product, then a sum: no fused multiply-add, so
  /// that every CPU writes the same values), written as `type`; in s8 as round(y / step).
  /// Requires scale and shift of one size, the channels, and step > 0.
  PixelNormalization(const std::vector<float>& scale, const std::vector<float>& shift,
                     NormalizedType type, float step);

  /// `pixels` pixels of x into y (of the type), shared by the OpenMP threads.
  void run(const float* x, void* y, std::int64_t pixels) const;

 private:
  std::int64_t channels_;
  NormalizedType type_;
  float per_step_;
  std::vector<float> scale_, shift_;  // a block's worth: 256 · channels values
};

}  // namespace labpose::nets::cpu
