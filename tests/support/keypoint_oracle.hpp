// The tests' oracle of keypoint decoding: DeepLabCut's rule written out plainly over host arrays
// (per bodypart the first maximum of its score map, row-major, then keypoint_at there), against
// which the backends' find_peaks and PoseRunner are checked. Not product code: analysis decodes
// the peaks a backend finds (pipeline/pose/pose_runner.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pipeline/pose/decode.hpp"

namespace labpose::testing {

/// One image's keypoints. score: (J, H, W) logits; locref: (2J, H, W) ordered dx0, dy0, dx1, ...
/// (host memory, C order); out: J predictions.
inline void decode_keypoints(const float* score, const float* locref, int joints, int height,
                             int width, const pipeline::DecodeSettings& settings,
                             pipeline::KeypointPrediction* out) {
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  for (int j = 0; j < joints; ++j) {
    const float* map = score + static_cast<std::size_t>(j) * plane;
    std::size_t best = 0;
    for (std::size_t i = 1; i < plane; ++i) {
      if (map[i] > map[best]) best = i;  // strict: the first maximum wins
    }
    const float dx = locref[(2 * static_cast<std::size_t>(j)) * plane + best];
    const float dy = locref[(2 * static_cast<std::size_t>(j) + 1) * plane + best];
    out[j] =
        pipeline::keypoint_at(static_cast<std::int64_t>(best), map[best], dx, dy, width, settings);
  }
}

}  // namespace labpose::testing
