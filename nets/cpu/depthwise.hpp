// A depthwise convolution (one 3×3 or 5×5 filter per channel, as MobileNetV2's and
// EfficientNet-Lite's blocks have) of bf16 NHWC activations on AVX-512, with fp32 sums. Each call
// computes 24 neighbouring outputs of one row for 16 channels in registers: every input pixel of
// the row is read and widened to fp32 once and multiplied into each output whose filter covers
// it, where oneDNN 2.6's bf16 depthwise kernels read and widen it once per tap. On an AMX Xeon,
// efficientnet_lite0 in bf16 ran 1.16x (batch 1) and 1.08x (batch 8) the frames/s with it; on a
// Zen 5 EPYC (AVX-512 BF16, no AMX) 0.93x and 0.95x, and mobilenet_v2_0.35 0.95-0.97x: plans
// take it on CPUs with AMX only. In fp32, where nothing is widened and twice the bytes move, it was
// slower than oneDNN's, so fp32 plans keep oneDNN's (docs/precision.md).
#pragma once

#include <cstdint>
#include <vector>

#include "nets/backend.hpp"
#include "nets/tensor.hpp"

namespace labpose::nets::cpu {

/// The instructions that decide where DepthwiseConv runs.
struct DepthwiseUnits {
  bool avx512 = false;  // AVX-512 F, BW, VL, DQ
  bool bf16 = false;    // AVX-512 BF16: rounding fp32 sums to bf16
  bool amx = false;     // AMX: the CPUs where it was measured faster than oneDNN's
};

/// Whether DepthwiseConv can compute a convolution with weights `weights` (K, C/groups, R, S) and
/// geometry `g` in `precision` on a CPU with `units`: one filter per channel (groups = K, one
/// input channel each), square 3×3 or 5×5, stride 1 or 2 and dilation 1 or 2 (each the same down
/// and across), in bf16.
bool depthwise_runs(const Shape& weights, const ConvGeometry& g, PlanPrecision precision,
                    const DepthwiseUnits& units);
/// Whether plans use it there: as depthwise_runs on a CPU with AMX, except a 3×3 filter at
/// stride 2, which reads each input pixel for one or two outputs only and ran no faster than
/// oneDNN's kernel (the large early layers, whose time is the memory's).
bool depthwise_applies(const Shape& weights, const ConvGeometry& g, PlanPrecision precision,
                       const DepthwiseUnits& units);
/// Whether plans on this CPU (as oneDNN sees its instructions: ONEDNN_MAX_CPU_ISA lowers them)
/// use it for such a layer. The environment variable LABPOSE_DEPTHWISE, read each time, chooses:
/// unset, where depthwise_applies; 1, also on a CPU without AMX where it runs (to compare it with
/// oneDNN's there); 0, nowhere.
bool depthwise_planned(const Shape& weights, const ConvGeometry& g, PlanPrecision precision);

/// How many DepthwiseConv objects this process has made: what tests observe to know that a plan
/// took this path.
std::int64_t depthwise_convolutions_made();

class DepthwiseConv {
 public:
  /// The convolution of `input`-shaped NHWC activations into `output`-shaped ones, both in
  /// `precision` (bf16), with weights (C, 1, R, R) fp32, bias C, then the activation
  /// `activation` and `activation_after` (each: < 0 none, 0 ReLU, > 0 ReLU capped there);
  /// `threads` OpenMP threads share a run's rows. Requires depthwise_runs on this CPU.
  DepthwiseConv(const std::vector<float>& weights, const Shape& weight_shape,
                const std::vector<float>& bias, const Shape& input, const Shape& output,
                const ConvGeometry& g, float activation, float activation_after,
                PlanPrecision precision, int threads);
  DepthwiseConv(const DepthwiseConv&) = delete;  // rows_ points into taps_ and bias_
  DepthwiseConv& operator=(const DepthwiseConv&) = delete;

  /// y = the convolution of x (NHWC, the input shape, bf16 bit patterns) into y (NHWC, the
  /// output shape, bf16). Every output is written.
  void run(const void* x, void* y) const;

  /// The geometry and buffers one run's rows share.
  struct Rows {
    const void* x;
    void* y;
    std::int64_t h, w, channels, out_h, out_w;
    int pad_top, pad_left;
    float activation, activation_after;
    const float* taps;  // [R][R][channels rounded up to 16]
    const float* bias;  // [channels rounded up to 16]
  };
  /// Computes output row `row` (frame row / out_h, row row % out_h) of every channel.
  using RowKernel = void (*)(const Rows& rows, std::int64_t row);

 private:
  Rows rows_{};
  std::int64_t row_count_ = 0;
  RowKernel kernel_ = nullptr;
  std::vector<float> taps_, bias_;
  int threads_ = 1;
};

}  // namespace labpose::nets::cpu
