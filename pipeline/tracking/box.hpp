// The keypoint box DeepLabCut's box tracker follows (calc_bboxes_from_keypoints with
// `boundingboxslack`), its intersection over union, and SORT's centre-area-ratio form of it.
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

struct Box {
  double x1 = 0.0, y1 = 0.0, x2 = 0.0, y2 = 0.0;  // pixels, x1 <= x2, y1 <= y2
};

/// The box around the keypoints with finite x and y, grown by `slack` pixels on every side; none
/// when no keypoint is finite or the box has no area (a single keypoint needs slack > 0).
std::optional<Box> keypoint_box(const std::vector<KeypointPrediction>& keypoints, double slack);

/// Intersection over union; 0 when the union is empty.
double box_iou(const Box& a, const Box& b);

/// SORT's measurement: centre x, centre y, area, width / height.
std::array<double, 4> box_to_measurement(const Box& box);
/// The inverse of box_to_measurement; NaN coordinates when area * ratio is negative.
Box measurement_to_box(double centre_x, double centre_y, double area, double ratio);

}  // namespace labpose::pipeline
