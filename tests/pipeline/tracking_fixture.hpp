// Hand-made animals and tracklets for the tracking suites: a 4-keypoint body pointing along its
// heading, placed at a known centre in each frame, so that every test knows which animal is which.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include "pipeline/tracking/tracklets.hpp"

namespace labpose::pipeline::tracking_test {

struct Point {
  double x = 0.0, y = 0.0;
};

/// Nose, two flanks and tail base of an animal 24 px long, centred on `centre`, facing `heading`.
inline std::vector<KeypointPrediction> body(Point centre, double heading = 0.0) {
  const double c = std::cos(heading), s = std::sin(heading);
  const Point local[] = {{12.0, 0.0}, {0.0, 4.0}, {0.0, -4.0}, {-12.0, 0.0}};
  std::vector<KeypointPrediction> keypoints;
  for (const auto& p : local)
    keypoints.push_back({centre.x + c * p.x - s * p.y, centre.y + s * p.x + c * p.y, 0.9});
  return keypoints;
}

inline Assembly animal(Point centre, double heading = 0.0) {
  Assembly assembly;
  assembly.keypoints = body(centre, heading);
  assembly.candidate.assign(assembly.keypoints.size(), 0);
  return assembly;
}

/// frames [from, to]: the animal at path(frame), with the given identity.
inline Tracklet tracklet(int from, int to, const std::function<Point(int)>& path,
                         int identity = -1) {
  Tracklet result;
  for (int frame = from; frame <= to; ++frame)
    result[frame] = TrackedAnimal{body(path(frame)), identity};
  return result;
}

/// The mean keypoint of a tracked animal.
inline Point centre_of(const TrackedAnimal& animal) {
  Point sum;
  for (const auto& keypoint : animal.keypoints) {
    sum.x += keypoint.x / static_cast<double>(animal.keypoints.size());
    sum.y += keypoint.y / static_cast<double>(animal.keypoints.size());
  }
  return sum;
}

}  // namespace labpose::pipeline::tracking_test
