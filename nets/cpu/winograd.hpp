// A 3×3 stride-1 convolution of bf16 or fp32 NHWC activations by Winograd's F(2×2, 3×3): each 2×2
// block of outputs (a tile) is computed from the 4×4 block of inputs under it in 16 multiplications
// per input and output channel instead of 36. Per tile the input is transformed (Bᵀ d B), the 16
// transformed points are 16 independent matrix products over the channels with the transformed
// weights (G g Gᵀ, computed once), and the products are transformed back (Aᵀ m A) into the four
// outputs, with the bias and the activation. The matrix products run on the CPU's bf16 dot-product
// instructions (vdpbf16ps) with fp32 sums, or on AVX-512 fused multiply-adds in fp32. A dilated
// convolution is four (dilation 2) undilated ones on the interleaved pixels, so its tiles take
// every second pixel.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nets/backend.hpp"
#include "nets/tensor.hpp"

namespace labpose::nets::cpu {

/// The instructions that decide where WinogradConv runs.
struct WinogradUnits {
  bool bf16 = false;    // AVX-512 BF16 (vdpbf16ps)
  bool avx512 = false;  // AVX-512 fused multiply-adds
  bool amx = false;     // AMX, far faster at bf16 than vdpbf16ps
};
/// This CPU's, as oneDNN sees them (ONEDNN_MAX_CPU_ISA lowers them).
WinogradUnits cpu_winograd_units();

/// Whether WinogradConv computes a convolution with weights `weights` (K, C, R, S) and geometry `g`
/// in `precision` on a CPU with `units`: 3×3, stride 1, one group, equal dilation across and down,
/// C a multiple of 16, K of 32 and both at least 64 (below that the transforms cost more than the
/// products save); in bf16 on a CPU with bf16 units but no AMX (where oneDNN's AMX kernels ran the
/// bf16 layers of resnet_50 1.8x faster than Winograd on vdpbf16ps: docs/precision.md), in fp32 on
/// one with AVX-512.
bool winograd_applies(const Shape& weights, const ConvGeometry& g, PlanPrecision precision,
                      const WinogradUnits& units);
/// The same on this CPU.
bool winograd_applies(const Shape& weights, const ConvGeometry& g, PlanPrecision precision);
/// Whether WinogradConv can compute it on this CPU: as winograd_applies, but without an AMX CPU's
/// preference for oneDNN's bf16 kernels (the kernel runs there on vdpbf16ps, and is tested).
bool winograd_runs(const Shape& weights, const ConvGeometry& g, PlanPrecision precision);

/// Whether plans use WinogradConv where it applies: yes, unless the environment variable
/// LABPOSE_WINOGRAD is 0 (to compare with oneDNN's direct convolutions in one run).
bool winograd_enabled();

/// How many WinogradConv objects this process has made (plans compiled with them count theirs):
/// what tests observe to know that a plan took this path.
std::int64_t winograd_convolutions_made();

class WinogradConv {
 public:
  /// The convolution of `input`-shaped NHWC activations into `output`-shaped ones, both in
  /// `precision` (bf16 or fp32), with weights (K, C, 3, 3) fp32, bias K, then the activation
  /// `activation` and `activation_after` (each: < 0 none, 0 ReLU, > 0 ReLU capped there).
  /// Transforms the weights once; `threads` is the OpenMP threads a run uses, each with its own
  /// part of the scratch memory.
  WinogradConv(const std::vector<float>& weights, const Shape& weight_shape,
               const std::vector<float>& bias, const Shape& input, const Shape& output,
               const ConvGeometry& g, float activation, float activation_after,
               PlanPrecision precision, int threads);

  /// The bytes of scratch memory a run needs (the convolutions of a plan, which run one after
  /// the other, share one buffer of the largest).
  std::size_t scratch_bytes() const {
    return per_thread_bytes_ * static_cast<std::size_t>(threads_);
  }

  /// y = the convolution of x (NHWC, the input shape; bf16 bit patterns or floats) into y (NHWC,
  /// the output shape, the same type), with `scratch` (scratch_bytes() of them). Every output
  /// pixel is written.
  void run(const void* x, void* y, void* scratch) const;

 private:
  struct Tile {
    std::int32_t n, y, x;  // the first output pixel of the tile; the others are a dilation away
  };
  template <typename T>
  void transform_weights(const std::vector<float>& weights, T* u) const;
  template <typename T>
  void run_typed(const T* x, T* y, void* scratch) const;
  template <typename T>
  void run_block(const T* x, T* y, std::size_t first, T* scratch) const;

  Shape input_, output_;
  std::int64_t channels_, outputs_;
  int pad_top_, pad_left_, dilation_;
  float activation_, activation_after_;
  bool bf16_;  // else fp32
  std::vector<Tile> tiles_;
  std::int64_t block_tiles_;          // tiles per block: a multiple of the kernel's rows
  std::shared_ptr<Storage> weights_;  // transformed: [16][K/32][C/step][32][step]
  std::vector<float> bias_;
  int threads_;
  std::size_t per_thread_bytes_;  // transformed inputs of a block and one kernel call's sums
};

}  // namespace labpose::nets::cpu
