// What every synthetic video shares: its size, length and seed, and the kinds of ground truth it
// gives (keypoints with a visibility flag, the occluding box, the bodypart names). The mice, their
// paths and their drawing are in the other files of pipeline/synthetic.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace labpose::pipeline {

struct SyntheticVideoOptions {
  int width = 320, height = 240;  // pixels
  int frames = 300;
  double fps = 30.0;
  std::uint64_t seed = 1;
};

/// A keypoint in pixel coordinates (pixel centres at whole numbers, as DeepLabCut's labels).
/// visible is false when something hides it (the occluder, another mouse) or it lies outside the
/// frame.
struct SyntheticKeypoint {
  double x = 0, y = 0;
  bool visible = true;
  bool operator==(const SyntheticKeypoint&) const = default;
};

/// The synthetic mouse's bodyparts, in label-column order: snout, leftear, rightear, tailbase.
const std::vector<std::string>& synthetic_bodyparts();

/// A box of pixels: columns x..x+width-1, rows y..y+height-1.
struct SyntheticBox {
  int x = 0, y = 0, width = 0, height = 0;
  /// Whether the point (px, py) lies on one of the box's pixels (pixel centres at whole numbers).
  bool contains(double px, double py) const;
};

}  // namespace labpose::pipeline
