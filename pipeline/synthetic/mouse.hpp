// A synthetic lab mouse filmed from above, with exact ground truth: a textured body, head, two
// ears and a tail moving along a smooth random path over a textured, slightly noisy arena floor,
// sometimes under an occluding object or partly out of the frame. Every keypoint's position in
// every frame is known exactly. Deterministic for a seed. The demo project and the tests use it;
// it is not a model of real mouse behaviour or appearance beyond what pose estimation needs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/synthetic/ground_truth.hpp"
#include "pipeline/synthetic/mouse_body.hpp"
#include "pipeline/synthetic/stage.hpp"

namespace labpose::pipeline {

class SyntheticMouse {
 public:
  explicit SyntheticMouse(const SyntheticVideoOptions& options);

  const SyntheticVideoOptions& options() const { return options_; }
  /// Renders frame `index` as BGR into `bgr` (height rows of width*3 bytes, `stride` apart);
  /// without the mouse (and its tail) when `with_mouse` is false.
  void render(int index, std::uint8_t* bgr, std::size_t stride, bool with_mouse = true) const;
  /// The keypoints of frame `index`, in synthetic_bodyparts() order.
  std::vector<SyntheticKeypoint> keypoints(int index) const;

  /// The occluding object.
  using Box = SyntheticBox;
  const Box& occluder() const { return stage_.occluder(); }

 private:
  // The path, then the stage (whose occluder is placed on the path).
  SyntheticMouse(const SyntheticVideoOptions& options, std::vector<synthetic::MousePose> poses);

  SyntheticVideoOptions options_;
  std::vector<synthetic::MousePose> poses_;  // one per frame
  synthetic::Stage stage_;
};

/// Renders the whole video to `path` (H.264 .mp4, or per the extension) and returns every frame's
/// keypoints.
std::vector<std::vector<SyntheticKeypoint>> write_synthetic_video(
    const std::filesystem::path& path, const SyntheticVideoOptions& options);

}  // namespace labpose::pipeline
