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

}  // namespace labpose::pipeline
