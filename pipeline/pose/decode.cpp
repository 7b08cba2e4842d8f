// Score-map decoding.
#include "pipeline/pose/decode.hpp"

#include <cstddef>

namespace labpose::pipeline {

void decode_keypoints(const float* score, const float* locref, int joints, int height, int width,
                      const DecodeSettings& settings, KeypointPrediction* out) {
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  for (int j = 0; j < joints; ++j) {
    const float* map = score + static_cast<std::size_t>(j) * plane;
    std::size_t best = 0;
    for (std::size_t i = 1; i < plane; ++i) {
      if (map[i] > map[best]) best = i;  // strict: the first maximum wins
    }
    const std::size_t best_row = best / static_cast<std::size_t>(width);
    const std::size_t best_col = best % static_cast<std::size_t>(width);
    const auto row = static_cast<double>(best_row);
    const auto col = static_cast<double>(best_col);
    double dx = 0.0, dy = 0.0;
    if (settings.location_refinement) {
      dx = locref[(2 * static_cast<std::size_t>(j)) * plane + best] * settings.locref_stdev;
      dy = locref[(2 * static_cast<std::size_t>(j) + 1) * plane + best] * settings.locref_stdev;
    }
    const double half = settings.stride / 2.0;
    out[j].x = col * settings.stride + half + dx;
    out[j].y = row * settings.stride + half + dy;
    out[j].likelihood = 1.0 / (1.0 + std::exp(-static_cast<double>(map[best])));
  }
}

}  // namespace labpose::pipeline
