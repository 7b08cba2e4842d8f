// The covariance ellipse by the closed-form eigen-decomposition of a 2 x 2 covariance.
#include "pipeline/tracking/ellipse.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace labpose::pipeline {

std::optional<Ellipse> fit_ellipse(const std::vector<KeypointPrediction>& keypoints, double sd) {
  double sum_x = 0.0, sum_y = 0.0;
  int count = 0;
  for (const auto& keypoint : keypoints) {
    if (!present(keypoint)) continue;
    sum_x += keypoint.x;
    sum_y += keypoint.y;
    ++count;
  }
  if (count < 3) return std::nullopt;
  const double mean_x = sum_x / count, mean_y = sum_y / count;
  double xx = 0.0, xy = 0.0, yy = 0.0;
  for (const auto& keypoint : keypoints) {
    if (!present(keypoint)) continue;
    xx += (keypoint.x - mean_x) * (keypoint.x - mean_x);
    xy += (keypoint.x - mean_x) * (keypoint.y - mean_y);
    yy += (keypoint.y - mean_y) * (keypoint.y - mean_y);
  }
  xx /= count - 1;  // np.cov's unbiased estimate
  xy /= count - 1;
  yy /= count - 1;
  const double half_trace = 0.5 * (xx + yy);
  const double spread = std::sqrt(0.25 * (xx - yy) * (xx - yy) + xy * xy);
  const double major = std::max(half_trace + spread, 0.0);
  const double minor = std::max(half_trace - spread, 0.0);
  // The eigenvector of the larger eigenvalue; for an isotropic cloud any direction (theta = 0).
  double axis_x = 1.0, axis_y = 0.0;
  if (spread > 0.0) {
    if (std::abs(xy) > 0.0) {
      axis_x = major - yy;
      axis_y = xy;
    } else if (yy > xx) {
      axis_x = 0.0;
      axis_y = 1.0;
    }
  }
  double theta = std::fmod(std::atan2(axis_y, axis_x), std::numbers::pi);
  if (theta < 0.0) theta += std::numbers::pi;
  Ellipse ellipse;
  ellipse.x = mean_x;
  ellipse.y = mean_y;
  ellipse.width = 2.0 * sd * std::sqrt(major);
  ellipse.height = 2.0 * sd * std::sqrt(minor);
  ellipse.theta = theta;
  return ellipse;
}

double ellipse_similarity(const Ellipse& a, const Ellipse& b) {
  const double largest = std::max({a.width, a.height, b.width, b.height});
  const double distance = std::hypot(a.x - b.x, a.y - b.y);
  // Two points (zero-sized ellipses) are alike only where they coincide.
  const double closeness =
      largest > 0.0 ? 1.0 - std::min(distance / largest, 1.0) : (distance == 0.0 ? 1.0 : 0.0);
  const double alignment = std::abs(std::cos(a.theta - b.theta));
  return 0.8 * closeness + 0.2 * alignment * closeness;
}

}  // namespace labpose::pipeline
