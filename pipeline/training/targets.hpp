// Training targets of DeepLabCut's single-animal recipe on the network's output grid (stride 8,
// cell centres at c * 8 + 4): score map 1 inside a disk of radius pos_dist_thresh * scale around
// each visible keypoint, 0 elsewhere (missing keypoints are negatives everywhere); location
// refinement (keypoint - cell centre) / locref_stdev with weight 1 on the disk's cells, 0
// elsewhere. Not the loss (that is the backend's) and not augmentation.
#pragma once

#include <cmath>

namespace labpose::pipeline {

struct TargetSettings {
  int stride = 8;
  double radius = 17.0;  // pos_dist_thresh times the augmentation scale, in crop pixels
  double locref_stdev = 7.2801;
};

/// Fills one image's targets. x, y: J keypoints in crop pixels (NaN = not visible).
/// score: (J, height, width); locref, locref_weights: (2J, height, width) ordered dx0, dy0, dx1,
/// ...
void build_targets(const double* x, const double* y, int joints, int height, int width,
                   const TargetSettings& settings, float* score, float* locref,
                   float* locref_weights);

}  // namespace labpose::pipeline
