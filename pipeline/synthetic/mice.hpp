// Several synthetic mice in one arena, with exact ground truth per individual and per frame: each
// mouse walks its own path and the paths meet, so the mice touch and pass each other
// (pipeline/synthetic/mice_paths). A keypoint is hidden under the occluder, under a mouse drawn
// over it, or outside the frame. The mice look alike unless asked for shades; an individual is its
// index. Deterministic for a seed. Not tracking, and not a model of real social behaviour.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/synthetic/ground_truth.hpp"
#include "pipeline/synthetic/mouse_body.hpp"
#include "pipeline/synthetic/stage.hpp"

namespace labpose::pipeline {

struct SyntheticMiceOptions {
  SyntheticVideoOptions video;   // size, length, seed
  int animals = 3;               // at least 1
  bool distinct_shades = false;  // each mouse a slightly different fur shade (identity from looks)
};

/// Every frame's keypoints of every mouse: truth[frame][individual][bodypart], in
/// synthetic_bodyparts() order.
using SyntheticMiceTruth = std::vector<std::vector<std::vector<SyntheticKeypoint>>>;

/// The individuals' names of a scene of `animals` mice: mouse1, mouse2, ...
std::vector<std::string> synthetic_individuals(int animals);

class SyntheticMice {
 public:
  /// Throws Error for a video smaller than 64x48, no frame, or no animal.
  explicit SyntheticMice(const SyntheticMiceOptions& options);

  const SyntheticMiceOptions& options() const { return options_; }
  int animals() const { return options_.animals; }
  /// Renders frame `index` as BGR into `bgr` (height rows of width*3 bytes, `stride` apart);
  /// only the floor and the occluder when `with_mice` is false.
  void render(int index, std::uint8_t* bgr, std::size_t stride, bool with_mice = true) const;
  /// The keypoints of frame `index`: [individual][bodypart].
  std::vector<std::vector<SyntheticKeypoint>> keypoints(int index) const;

  /// Mouse `individual`'s body centre (pixels) and heading (radians) in frame `index`.
  const synthetic::MousePose& pose(int index, int individual) const;
  /// The individuals of frame `index` in drawing order, back to front: by the body centre's row
  /// (a mouse lower in the image is drawn over one higher up), then by index.
  std::vector<int> drawing_order(int index) const;
  /// Whether the point (x, y) lies on mouse `individual`'s body, head or ears in frame `index`.
  bool on_body(int index, int individual, double x, double y) const;
  /// The occluding object.
  const SyntheticBox& occluder() const { return stage_.occluder(); }

 private:
  SyntheticMice(const SyntheticMiceOptions& options,
                std::vector<std::vector<synthetic::MousePose>> paths);

  SyntheticMiceOptions options_;
  std::vector<std::vector<synthetic::MousePose>> paths_;  // [individual][frame]
  synthetic::Stage stage_;
};

/// Renders the whole scene to `path` (H.264 .mp4, or per the extension) and returns every frame's
/// keypoints. Any length: the frames are rendered and written one at a time.
SyntheticMiceTruth write_synthetic_mice_video(const std::filesystem::path& path,
                                              const SyntheticMiceOptions& options);

}  // namespace labpose::pipeline
