// Disk score maps and location-refinement targets.
#include "pipeline/training/targets.hpp"

#include <algorithm>
#include <cstddef>

namespace labpose::pipeline {

CellRange cells_near(double low, double high, double reach, int stride, int cells) {
  const double half = stride / 2.0;
  // Clamped before the cast: a keypoint far outside the crop must not overflow an int.
  const auto cell = [cells](double value) {
    return static_cast<int>(std::clamp(value, -1.0, static_cast<double>(cells)));
  };
  return {std::max(0, cell(std::floor((low - reach - half) / stride))),
          std::min(cells - 1, cell(std::ceil((high + reach - half) / stride)))};
}

void build_targets(const double* x, const double* y, int joints, int height, int width,
                   const TargetSettings& settings, float* score, float* locref,
                   float* locref_weights) {
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  std::fill(score, score + static_cast<std::size_t>(joints) * plane, 0.0F);
  std::fill(locref, locref + 2 * static_cast<std::size_t>(joints) * plane, 0.0F);
  std::fill(locref_weights, locref_weights + 2 * static_cast<std::size_t>(joints) * plane, 0.0F);
  for (int j = 0; j < joints; ++j) {
    if (std::isnan(x[j]) || std::isnan(y[j])) continue;
    float* s = score + static_cast<std::size_t>(j) * plane;
    float* dx_map = locref + 2 * static_cast<std::size_t>(j) * plane;
    float* dy_map = dx_map + plane;
    float* wx = locref_weights + 2 * static_cast<std::size_t>(j) * plane;
    float* wy = wx + plane;
    for_each_disk_cell(x[j], y[j], settings.radius, settings.stride, height, width,
                       [&](std::size_t i, double dx, double dy) {
                         s[i] = 1.0F;
                         dx_map[i] = static_cast<float>(dx / settings.locref_stdev);
                         dy_map[i] = static_cast<float>(dy / settings.locref_stdev);
                         wx[i] = wy[i] = 1.0F;
                       });
  }
}

}  // namespace labpose::pipeline
