// Keypoint boxes and their overlap.
#include "pipeline/tracking/box.hpp"

#include <algorithm>
#include <cmath>

namespace labpose::pipeline {

std::optional<Box> keypoint_box(const std::vector<KeypointPrediction>& keypoints, double slack) {
  bool any = false;
  Box box{INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (const auto& keypoint : keypoints) {
    if (!present(keypoint)) continue;
    any = true;
    box.x1 = std::min(box.x1, keypoint.x);
    box.y1 = std::min(box.y1, keypoint.y);
    box.x2 = std::max(box.x2, keypoint.x);
    box.y2 = std::max(box.y2, keypoint.y);
  }
  if (!any) return std::nullopt;
  box.x1 -= slack;
  box.y1 -= slack;
  box.x2 += slack;
  box.y2 += slack;
  if (box.x2 <= box.x1 || box.y2 <= box.y1) return std::nullopt;
  return box;
}

double box_iou(const Box& a, const Box& b) {
  const double width = std::max(0.0, std::min(a.x2, b.x2) - std::max(a.x1, b.x1));
  const double height = std::max(0.0, std::min(a.y2, b.y2) - std::max(a.y1, b.y1));
  const double intersection = width * height;
  const double union_area =
      (a.x2 - a.x1) * (a.y2 - a.y1) + (b.x2 - b.x1) * (b.y2 - b.y1) - intersection;
  return union_area > 0.0 ? intersection / union_area : 0.0;
}

std::array<double, 4> box_to_measurement(const Box& box) {
  const double width = box.x2 - box.x1, height = box.y2 - box.y1;
  return {box.x1 + 0.5 * width, box.y1 + 0.5 * height, width * height, width / height};
}

Box measurement_to_box(double centre_x, double centre_y, double area, double ratio) {
  const double width = std::sqrt(area * ratio);
  const double height = area / width;
  return {centre_x - 0.5 * width, centre_y - 0.5 * height, centre_x + 0.5 * width,
          centre_y + 0.5 * height};
}

}  // namespace labpose::pipeline
