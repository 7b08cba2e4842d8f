// Peaks of multi-animal score maps: smoothing, max-pool NMS and location refinement.
#include "pipeline/assembly/candidates.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

std::size_t size_of(int rows, int cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

void check_settings(const CandidateSettings& settings) {
  if (settings.nms_radius < 1) {
    throw Error(fmt::format("nmsradius must be at least 1 cell (found {})", settings.nms_radius),
                "DeepLabCut's default is 5");
  }
  if (!(settings.smoothing_sigma >= 0.0)) {
    throw Error(fmt::format("sigma must be 0 (no smoothing) or positive (found {})",
                            settings.smoothing_sigma));
  }
  if (settings.top_k < 0) {
    throw Error(fmt::format("top_k must be 0 (every peak) or positive (found {})", settings.top_k));
  }
}

// Keeps the `top_k` candidates of highest confidence (earlier cells first among equals), in
// row-major order.
void keep_best(std::vector<int>& cells, const float* map, int top_k) {
  if (top_k == 0 || cells.size() <= static_cast<std::size_t>(top_k)) return;
  std::stable_sort(cells.begin(), cells.end(), [map](int a, int b) {
    return map[static_cast<std::size_t>(a)] > map[static_cast<std::size_t>(b)];
  });
  cells.resize(static_cast<std::size_t>(top_k));
  std::sort(cells.begin(), cells.end());
}

// The position of bodypart j's candidate at (row, col), first refined by its own cell: with
// `neighbours`, the mean of the positions that it and the cells of its 3 x 3 window refine to,
// each weighted by its score, among those closer than one stride to its own (the others point at
// another keypoint); DeepLabCut's, its own cell's, without.
KeypointPrediction refined_position(const MapStack& locref, const float* map, int j, int row,
                                    int col, int width, int height, bool neighbours,
                                    const DecodeSettings& decode) {
  const auto at = [&](int r, int c) {
    return keypoint_at(static_cast<std::int64_t>(r) * width + c, 0.0f, locref.at(2 * j, r, c),
                       locref.at(2 * j + 1, r, c), width, decode);
  };
  KeypointPrediction own = at(row, col);
  if (!neighbours) return own;
  double x = 0.0, y = 0.0, weights = 0.0;
  for (int r = std::max(0, row - 1); r <= std::min(height - 1, row + 1); ++r) {
    for (int c = std::max(0, col - 1); c <= std::min(width - 1, col + 1); ++c) {
      const KeypointPrediction vote = at(r, c);
      const double weight = map[size_of(r, width) + static_cast<std::size_t>(c)];
      if (!(weight > 0.0) || std::hypot(vote.x - own.x, vote.y - own.y) >= decode.stride) continue;
      x += weight * vote.x;
      y += weight * vote.y;
      weights += weight;
    }
  }
  if (weights > 0.0) {
    own.x = x / weights;
    own.y = y / weights;
  }
  return own;
}

}  // namespace

std::vector<int> find_map_peaks(const float* map, int height, int width, int nms_radius,
                                double min_confidence) {
  // TensorFlow's "SAME" padding of a k-cell window: (k - 1) / 2 cells before, the rest after.
  const int before = (nms_radius - 1) / 2, after = nms_radius - 1 - before;
  std::vector<char> accepted(size_of(height, width), 0);
  std::vector<int> peaks;
  for (int row = 0; row < height; ++row) {
    for (int col = 0; col < width; ++col) {
      const int cell = row * width + col;
      const float value = map[cell];
      if (!(value >= min_confidence)) continue;  // NaN never peaks
      bool peak = true;
      for (int r = std::max(0, row - before); peak && r <= std::min(height - 1, row + after); ++r) {
        for (int c = std::max(0, col - before); c <= std::min(width - 1, col + after); ++c) {
          const int other = r * width + c;
          // An earlier peak in the window is an equal maximum: the plateau already has its peak.
          if (map[other] > value || (other < cell && accepted[static_cast<std::size_t>(other)])) {
            peak = false;
            break;
          }
        }
      }
      if (peak) {
        accepted[static_cast<std::size_t>(cell)] = 1;
        peaks.push_back(cell);
      }
    }
  }
  return peaks;
}

std::vector<float> smooth_map(const float* map, int height, int width, int nms_radius,
                              double sigma) {
  std::vector<double> kernel(static_cast<std::size_t>(2 * nms_radius + 1));
  double total = 0.0;
  for (int k = -nms_radius; k <= nms_radius; ++k) {
    const double weight = std::exp(-static_cast<double>(k * k) / (2.0 * sigma * sigma));
    kernel[static_cast<std::size_t>(k + nms_radius)] = weight;
    total += weight;
  }
  for (double& weight : kernel) weight /= total;
  // The 2-D kernel is an outer product: smooth along rows, then along columns.
  std::vector<double> along_rows(size_of(height, width), 0.0);
  for (int row = 0; row < height; ++row) {
    for (int col = 0; col < width; ++col) {
      double sum = 0.0;
      for (int k = -nms_radius; k <= nms_radius; ++k) {
        if (col + k < 0 || col + k >= width) continue;
        sum += kernel[static_cast<std::size_t>(k + nms_radius)] * map[row * width + col + k];
      }
      along_rows[static_cast<std::size_t>(row * width + col)] = sum;
    }
  }
  std::vector<float> smoothed(size_of(height, width));
  for (int row = 0; row < height; ++row) {
    for (int col = 0; col < width; ++col) {
      double sum = 0.0;
      for (int k = -nms_radius; k <= nms_radius; ++k) {
        if (row + k < 0 || row + k >= height) continue;
        sum += kernel[static_cast<std::size_t>(k + nms_radius)] *
               along_rows[static_cast<std::size_t>((row + k) * width + col)];
      }
      smoothed[static_cast<std::size_t>(row * width + col)] = static_cast<float>(sum);
    }
  }
  return smoothed;
}

Candidates find_candidates(const MapStack& scores, const MapStack& locref,
                           const CandidateSettings& settings) {
  check_settings(settings);
  check_map_stack(scores, "score maps");
  const bool refine = settings.decode.location_refinement;
  if (refine) {
    check_map_stack(locref, "location refinement maps");
    check_same_grid(locref, "location refinement maps", scores, "score maps");
    if (locref.channels != 2 * scores.channels) {
      throw Error(
          fmt::format("location refinement maps: {} bodyparts need {} channels (dx, dy "
                      "each), found {}",
                      scores.channels, 2 * scores.channels, locref.channels));
    }
  }
  const int height = scores.height, width = scores.width;
  Candidates candidates(static_cast<std::size_t>(scores.channels));
  for (int j = 0; j < scores.channels; ++j) {
    const float* map = scores.values.data() + static_cast<std::size_t>(j) * size_of(height, width);
    std::vector<float> smoothed;
    if (settings.smoothing_sigma > 0.0) {
      smoothed = smooth_map(map, height, width, settings.nms_radius, settings.smoothing_sigma);
    }
    std::vector<int> cells = find_map_peaks(smoothed.empty() ? map : smoothed.data(), height, width,
                                            settings.nms_radius, settings.min_confidence);
    keep_best(cells, map, settings.top_k);
    for (const int cell : cells) {
      const int row = cell / width, col = cell % width;
      // keypoint_at's likelihood is a sigmoid of a logit; these scores are probabilities already.
      const KeypointPrediction at =
          refine ? refined_position(locref, map, j, row, col, width, height,
                                    settings.locref_neighbours, settings.decode)
                 : keypoint_at(cell, 0.0f, 0.0f, 0.0f, width, settings.decode);
      candidates[static_cast<std::size_t>(j)].push_back(
          {j, row, col, at.x, at.y, static_cast<double>(map[cell])});
    }
  }
  return candidates;
}

}  // namespace labpose::pipeline
