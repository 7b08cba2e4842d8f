// From network outputs to keypoints, DeepLabCut's way: per bodypart the first maximum of the
// score map (row-major), refined by the location-refinement offset at that cell:
// x = col * stride + stride / 2 + dx * locref_stdev, likelihood = sigmoid(score) there.
// Not multi-animal assembly and not NMS: one keypoint per bodypart.
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

/// The keypoint of a peak found by Backend::find_peaks: `cell` (row * width + column) of a map
/// `width` cells wide, the score there and the raw location-refinement values dx, dy there.
KeypointPrediction keypoint_at(std::int64_t cell, float score, float dx, float dy, int width,
                               const DecodeSettings& settings);

/// One image's keypoints. score: (J, H, W) logits; locref: (2J, H, W) ordered dx0, dy0, dx1, ...
/// (host memory, C order); out: J predictions.
void decode_keypoints(const float* score, const float* locref, int joints, int height, int width,
                      const DecodeSettings& settings, KeypointPrediction* out);

}  // namespace labpose::pipeline
