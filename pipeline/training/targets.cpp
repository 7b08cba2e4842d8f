// Disk score maps and location-refinement targets.
#include "pipeline/training/targets.hpp"

#include <algorithm>
#include <cstddef>

namespace labpose::pipeline {

void build_targets(const double* x, const double* y, int joints, int height, int width,
                   const TargetSettings& settings, float* score, float* locref,
                   float* locref_weights) {
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  std::fill(score, score + static_cast<std::size_t>(joints) * plane, 0.0F);
  std::fill(locref, locref + 2 * static_cast<std::size_t>(joints) * plane, 0.0F);
  std::fill(locref_weights, locref_weights + 2 * static_cast<std::size_t>(joints) * plane, 0.0F);
  const double half = settings.stride / 2.0, radius_squared = settings.radius * settings.radius;
  for (int j = 0; j < joints; ++j) {
    if (std::isnan(x[j]) || std::isnan(y[j])) continue;
    float* s = score + static_cast<std::size_t>(j) * plane;
    float* dx = locref + 2 * static_cast<std::size_t>(j) * plane;
    float* dy = dx + plane;
    float* wx = locref_weights + 2 * static_cast<std::size_t>(j) * plane;
    float* wy = wx + plane;
    // Only the cells whose centre can be inside the disk.
    const int row_first = std::max(
        0, static_cast<int>(std::floor((y[j] - settings.radius - half) / settings.stride)));
    const int row_last = std::min(
        height - 1, static_cast<int>(std::ceil((y[j] + settings.radius - half) / settings.stride)));
    const int col_first = std::max(
        0, static_cast<int>(std::floor((x[j] - settings.radius - half) / settings.stride)));
    const int col_last = std::min(
        width - 1, static_cast<int>(std::ceil((x[j] + settings.radius - half) / settings.stride)));
    for (int r = row_first; r <= row_last; ++r) {
      const double cy = r * settings.stride + half;
      for (int c = col_first; c <= col_last; ++c) {
        const double cx = c * settings.stride + half;
        const double ox = x[j] - cx, oy = y[j] - cy;
        if (ox * ox + oy * oy > radius_squared) continue;
        const std::size_t i = static_cast<std::size_t>(r) * static_cast<std::size_t>(width) +
                              static_cast<std::size_t>(c);
        s[i] = 1.0F;
        dx[i] = static_cast<float>(ox / settings.locref_stdev);
        dy[i] = static_cast<float>(oy / settings.locref_stdev);
        wx[i] = wy[i] = 1.0F;
      }
    }
  }
}

}  // namespace labpose::pipeline
