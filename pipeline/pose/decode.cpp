// Score-map decoding.
#include "pipeline/pose/decode.hpp"

#include <cstddef>
#include <cstdint>

namespace labpose::pipeline {

KeypointPrediction keypoint_at(std::int64_t cell, float score, float dx, float dy, int width,
                               const DecodeSettings& settings) {
  const auto row = static_cast<double>(cell / width);
  const auto col = static_cast<double>(cell % width);
  double offset_x = 0.0, offset_y = 0.0;
  if (settings.location_refinement) {
    offset_x = dx * settings.locref_stdev;
    offset_y = dy * settings.locref_stdev;
  }
  const double half = settings.stride / 2.0;
  KeypointPrediction keypoint;
  keypoint.x = col * settings.stride + half + offset_x;
  keypoint.y = row * settings.stride + half + offset_y;
  keypoint.likelihood = 1.0 / (1.0 + std::exp(-static_cast<double>(score)));
  return keypoint;
}

void decode_keypoints(const float* score, const float* locref, int joints, int height, int width,
                      const DecodeSettings& settings, KeypointPrediction* out) {
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  for (int j = 0; j < joints; ++j) {
    const float* map = score + static_cast<std::size_t>(j) * plane;
    std::size_t best = 0;
    for (std::size_t i = 1; i < plane; ++i) {
      if (map[i] > map[best]) best = i;  // strict: the first maximum wins
    }
    const float dx = locref[(2 * static_cast<std::size_t>(j)) * plane + best];
    const float dy = locref[(2 * static_cast<std::size_t>(j) + 1) * plane + best];
    out[j] = keypoint_at(static_cast<std::int64_t>(best), map[best], dx, dy, width, settings);
  }
}

}  // namespace labpose::pipeline
