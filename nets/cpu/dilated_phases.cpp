// Dilated convolutions by phases: which ones, and the two rearrangements around them.
#include "nets/cpu/dilated_phases.hpp"

#include <omp.h>

#include <atomic>
#include <cstring>

#include "nets/cpu/backend.hpp"
#include "nets/cpu/dnnl_versions.hpp"
#include "nets/cpu/kernel_switch.hpp"

namespace labpose::nets::cpu {
namespace {

std::atomic<std::int64_t> made{0};

// Calls f(image row of the phases, its source row y in the image or -1, phase column offset b) for
// every row of every phase image: phase p = a · d + b of image n, phase row r reads image row
// r · d + a.
template <typename F>
void for_each_phase_row(const PhaseSplit& s, F&& f) {
  const std::int64_t rows = s.phase_images() * s.phase_height();
#pragma omp parallel for schedule(static)
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t image = row / s.phase_height(), r = row % s.phase_height();
    const std::int64_t phase = image / s.images, n = image % s.images;
    const std::int64_t a = phase / s.dilation, b = phase % s.dilation;
    const std::int64_t y = r * s.dilation + a;
    f(row, n, y < s.height ? y : -1, b);
  }
}

}  // namespace

bool phases_apply(const Shape& weights, const ConvGeometry& g, PlanPrecision precision, bool amx,
                  int dnnl_major) {
  const int d = g.dilation_h;
  const std::int64_t r = weights[2], s = weights[3];
  return amx && dnnl_major < 3 && precision == PlanPrecision::bf16 && g.groups == 1 && d >= 2 &&
         g.dilation_w == d && g.stride_h == 1 && g.stride_w == 1 && r % 2 == 1 && s % 2 == 1 &&
         g.pad_top == d * (r - 1) / 2 && g.pad_bottom == g.pad_top &&
         g.pad_left == d * (s - 1) / 2 && g.pad_right == g.pad_left;
}

bool phases_apply(const Shape& weights, const ConvGeometry& g, PlanPrecision precision) {
  static const bool amx = cpu_has_amx();
  return phases_apply(weights, g, precision, amx, kDnnlMajor);
}

ConvGeometry phase_geometry(const ConvGeometry& g) {
  ConvGeometry phase = g;
  phase.dilation_h = phase.dilation_w = 1;
  phase.pad_top /= g.dilation_h;
  phase.pad_bottom /= g.dilation_h;
  phase.pad_left /= g.dilation_w;
  phase.pad_right /= g.dilation_w;
  return phase;
}

bool phases_enabled() {
  static const bool enabled = switched_on("LABPOSE_DILATED_PHASES");
  return enabled;
}

std::int64_t convolutions_by_phases() {
  return made.load();
}

void count_convolution_by_phases() {
  ++made;
}

void split_into_phases(const void* in, void* out, const PhaseSplit& split,
                       std::size_t element_bytes) {
  const auto pixel = static_cast<std::size_t>(split.channels) * element_bytes;
  const auto* from = static_cast<const std::byte*>(in);
  auto* to = static_cast<std::byte*>(out);
  for_each_phase_row(split, [&](std::int64_t row, std::int64_t n, std::int64_t y, std::int64_t b) {
    std::byte* target = to + static_cast<std::size_t>(row * split.phase_width()) * pixel;
    for (std::int64_t c = 0; c < split.phase_width(); ++c) {
      const std::int64_t x = c * split.dilation + b;
      std::byte* at = target + static_cast<std::size_t>(c) * pixel;
      if (y < 0 || x >= split.width) {
        std::memset(at, 0, pixel);
      } else {
        std::memcpy(
            at, from + static_cast<std::size_t>((n * split.height + y) * split.width + x) * pixel,
            pixel);
      }
    }
  });
}

void merge_phases(const void* in, void* out, const PhaseSplit& split, std::size_t element_bytes) {
  const auto pixel = static_cast<std::size_t>(split.channels) * element_bytes;
  const auto* from = static_cast<const std::byte*>(in);
  auto* to = static_cast<std::byte*>(out);
  for_each_phase_row(split, [&](std::int64_t row, std::int64_t n, std::int64_t y, std::int64_t b) {
    if (y < 0) return;
    const std::byte* source = from + static_cast<std::size_t>(row * split.phase_width()) * pixel;
    for (std::int64_t c = 0; c < split.phase_width(); ++c) {
      const std::int64_t x = c * split.dilation + b;
      if (x >= split.width) break;
      std::memcpy(to + static_cast<std::size_t>((n * split.height + y) * split.width + x) * pixel,
                  source + static_cast<std::size_t>(c) * pixel, pixel);
    }
  });
}

}  // namespace labpose::nets::cpu
