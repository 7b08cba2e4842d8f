// A dilated convolution computed as an undilated one on the phases of its input. Phase (a, b) of
// dilation d holds the pixels (y, x) with y % d == a and x % d == b, as an image of its own, a
// d-th the height and width. The taps of an output pixel lie d apart in the input, all in its own
// phase, where they lie 1 apart: so the undilated convolution of every phase (padded by pad / d)
// gives the output's pixels of that phase, and the d² phases go through it as one batch.
// oneDNN 2.6 runs dilated bf16 convolutions on AMX with an older kernel than its brgconv one:
// resnet_50's two dilated 3×3 layers took 2.9 ms each at 640×480 on a 2-core AMX Xeon, where
// OpenVINO's oneDNN took 2.3 ms (docs/precision.md). oneDNN 3 runs them on brgconv itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nets/backend.hpp"
#include "nets/tensor.hpp"

namespace labpose::nets::cpu {

/// NHWC activations of `images` images of height × width × channels, split by `dilation`.
struct PhaseSplit {
  std::int64_t images = 1, height = 1, width = 1, channels = 1;
  int dilation = 2;

  std::int64_t phase_height() const { return (height + dilation - 1) / dilation; }
  std::int64_t phase_width() const { return (width + dilation - 1) / dilation; }
  /// The phases' batch: dilation² × images, phase-major ((a · dilation + b) · images + image).
  std::int64_t phase_images() const {
    return static_cast<std::int64_t>(dilation) * dilation * images;
  }
};

/// Whether plans compute a convolution with weights (K, C/groups, R, S) and geometry `g` in
/// `precision` by phases, on a CPU with AMX (`amx`) and oneDNN of major version `dnnl_major`:
/// bf16, dense (groups 1), stride 1, the same dilation d ≥ 2 down and across, odd R and S, and
/// padded to keep the size (d · (R - 1) / 2 above and below, d · (S - 1) / 2 left and right).
bool phases_apply(const Shape& weights, const ConvGeometry& g, PlanPrecision precision, bool amx,
                  int dnnl_major);
/// The same on this CPU and this build's oneDNN.
bool phases_apply(const Shape& weights, const ConvGeometry& g, PlanPrecision precision);

/// The undilated geometry that the phases are convolved with: stride 1, padding / dilation.
ConvGeometry phase_geometry(const ConvGeometry& g);

/// Whether plans use phases where they apply: yes, unless the environment variable
/// LABPOSE_DILATED_PHASES is 0 (to compare with oneDNN's dilated kernel in one run).
bool phases_enabled();

/// How many dilated convolutions plans of this process have computed by phases: what tests
/// observe to know that a plan took this path.
std::int64_t convolutions_by_phases();
/// Counts one (the plan calls it when it compiles such a convolution).
void count_convolution_by_phases();

/// `in` (split.images, height, width, channels) NHWC, of `element_bytes` each, into `out`
/// (split.phase_images(), phase_height, phase_width, channels) NHWC; the pixels of a phase beyond
/// the image (height or width not a multiple of the dilation) are zero.
void split_into_phases(const void* in, void* out, const PhaseSplit& split,
                       std::size_t element_bytes);

/// The inverse: `in` (phase_images, phase_height, phase_width, channels) into `out` (images,
/// height, width, channels); the phases' pixels beyond the image are dropped.
void merge_phases(const void* in, void* out, const PhaseSplit& split, std::size_t element_bytes);

}  // namespace labpose::nets::cpu
