// Training targets of DeepLabCut's single-animal recipe on the network's output grid (stride 8,
// cell centres at c * 8 + 4): score map 1 inside a disk of radius pos_dist_thresh * scale around
// each visible keypoint, 0 elsewhere (missing keypoints are negatives everywhere); location
// refinement (keypoint - cell centre) / locref_stdev with weight 1 on the disk's cells, 0
// elsewhere. Not the loss (that is the backend's) and not augmentation.
#pragma once

#include <cmath>
#include <cstddef>

namespace labpose::pipeline {

struct TargetSettings {
  int stride = 8;
  double radius = 17.0;  // pos_dist_thresh times the augmentation scale, in crop pixels
  double locref_stdev = 7.2801;
};

/// The cells of one axis of the output grid (`cells` of `stride` pixels, centres at c * stride +
/// stride / 2) whose centres may lie within `reach` pixels of [low, high]; first > last: none.
/// Coordinates far outside the grid are clamped, never overflow.
struct CellRange {
  int first = 0, last = -1;
};
CellRange cells_near(double low, double high, double reach, int stride, int cells);

/// Calls visit(cell, dx, dy) for every cell of a height x width grid at `stride` whose centre is
/// within `radius` pixels of (x, y): cell = row * width + column, (dx, dy) = (x, y) - centre in
/// pixels. The score-map disk of single- and multi-animal targets.
template <typename Visit>
void for_each_disk_cell(double x, double y, double radius, int stride, int height, int width,
                        Visit visit) {
  const double half = stride / 2.0, radius_squared = radius * radius;
  const CellRange rows = cells_near(y, y, radius, stride, height);
  const CellRange cols = cells_near(x, x, radius, stride, width);
  for (int r = rows.first; r <= rows.last; ++r) {
    const double dy = y - (r * stride + half);
    for (int c = cols.first; c <= cols.last; ++c) {
      const double dx = x - (c * stride + half);
      if (dx * dx + dy * dy > radius_squared) continue;
      visit(static_cast<std::size_t>(r) * static_cast<std::size_t>(width) +
                static_cast<std::size_t>(c),
            dx, dy);
    }
  }
}

/// Fills one image's targets. x, y: J keypoints in crop pixels (NaN = not visible).
/// score: (J, height, width); locref, locref_weights: (2J, height, width) ordered dx0, dy0, dx1,
/// ...
void build_targets(const double* x, const double* y, int joints, int height, int width,
                   const TargetSettings& settings, float* score, float* locref,
                   float* locref_weights);

}  // namespace labpose::pipeline
