// The first maximum of each score map, and the location refinement there.
#include "nets/peaks.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "nets/backend.hpp"

namespace labpose::nets {
namespace {

// The offset of logical element (n, c, h, w) of a rank-4 host tensor.
std::int64_t offset_of(const Tensor& t, std::int64_t n, std::int64_t c, std::int64_t h,
                       std::int64_t w) {
  const Shape& s = t.shape();
  return t.layout() == Layout::nhwc ? ((n * s.h() + h) * s.w() + w) * s.c() + c
                                    : ((n * s.c() + c) * s.h() + h) * s.w() + w;
}

}  // namespace

void check_peak_shapes(const Tensor& score, const Tensor& locref, const Tensor& peaks) {
  const Shape& s = score.shape();
  if (s.rank() != 4 || locref.shape() != Shape{s.n(), 2 * s.c(), s.h(), s.w()} ||
      peaks.elements() != s.n() * s.c() * Backend::kPeakValues) {
    throw Error(fmt::format("internal error: find_peaks of score {}, locref {} into {} values",
                            s.text(), locref.shape().text(), peaks.elements()),
                "this is a bug in labpose, not in your data; please report it");
  }
}

void find_peaks_on_host(const Tensor& score, const Tensor& locref, Tensor& peaks, bool parallel) {
  check_peak_shapes(score, locref, peaks);
  const Shape& s = score.shape();
  const std::int64_t maps = s.n() * s.c(), width = s.w(), cells = s.h() * s.w();
  const float* values = score.data();
  const float* refinement = locref.data();
  float* out = peaks.data();
#pragma omp parallel for if (parallel) schedule(static)
  for (std::int64_t m = 0; m < maps; ++m) {
    const std::int64_t n = m / s.c(), j = m % s.c();
    std::int64_t best = 0;
    float best_value = values[offset_of(score, n, j, 0, 0)];
    for (std::int64_t cell = 1; cell < cells; ++cell) {
      const float v = values[offset_of(score, n, j, cell / width, cell % width)];
      if (v > best_value) {  // strict: the first maximum wins, and NaN never does
        best = cell;
        best_value = v;
      }
    }
    const std::int64_t h = best / width, w = best % width;
    float* peak = out + m * Backend::kPeakValues;
    peak[0] = static_cast<float>(best);
    peak[1] = best_value;
    peak[2] = refinement[offset_of(locref, n, 2 * j, h, w)];
    peak[3] = refinement[offset_of(locref, n, 2 * j + 1, h, w)];
  }
}

}  // namespace labpose::nets
