// From a score-map peak to a keypoint, DeepLabCut's way: the peak (per bodypart the first maximum
// of the score map, row-major, found by Backend::find_peaks) refined by the location-refinement
// offset at that cell: x = col * stride + stride / 2 + dx * locref_stdev, likelihood =
// sigmoid(score) there. Not multi-animal assembly and not NMS: one keypoint per bodypart.
#pragma once

#include <cmath>
#include <cstdint>

namespace labpose::pipeline {

struct DecodeSettings {
  int stride = 8;
  double locref_stdev = 7.2801;
  bool location_refinement = true;
};

struct KeypointPrediction {
  double x = std::nan(""), y = std::nan("");
  double likelihood = 0.0;
};

/// Whether a keypoint was found: a missing one has NaN coordinates.
inline bool present(const KeypointPrediction& keypoint) {
  return std::isfinite(keypoint.x) && std::isfinite(keypoint.y);
}

/// The keypoint of a peak found by Backend::find_peaks: `cell` (row * width + column) of a map
/// `width` cells wide, the score there and the raw location-refinement values dx, dy there.
KeypointPrediction keypoint_at(std::int64_t cell, float score, float dx, float dy, int width,
                               const DecodeSettings& settings);

}  // namespace labpose::pipeline
