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

namespace labpose::pipeline {

struct SyntheticVideoOptions {
  int width = 320, height = 240;  // pixels
  int frames = 300;
  double fps = 30.0;
  std::uint64_t seed = 1;
};

/// A keypoint in pixel coordinates (pixel centres at whole numbers, as DeepLabCut's labels).
/// visible is false when the occluder hides it or it lies outside the frame.
struct SyntheticKeypoint {
  double x = 0, y = 0;
  bool visible = true;
};

/// The synthetic mouse's bodyparts, in label-column order: snout, leftear, rightear, tailbase.
const std::vector<std::string>& synthetic_bodyparts();

class SyntheticMouse {
 public:
  explicit SyntheticMouse(const SyntheticVideoOptions& options);

  const SyntheticVideoOptions& options() const { return options_; }
  /// Renders frame `index` as BGR into `bgr` (height rows of width*3 bytes, `stride` apart);
  /// without the mouse (and its tail) when `with_mouse` is false.
  void render(int index, std::uint8_t* bgr, std::size_t stride, bool with_mouse = true) const;
  /// The keypoints of frame `index`, in synthetic_bodyparts() order.
  std::vector<SyntheticKeypoint> keypoints(int index) const;

  /// The occluding object: columns x..x+width-1, rows y..y+height-1.
  struct Box {
    int x = 0, y = 0, width = 0, height = 0;
    bool contains(double px, double py) const;
  };
  const Box& occluder() const { return occluder_; }

 private:
  struct Pose {
    double x, y, heading;  // body centre (pixels), direction of the snout (radians)
  };
  SyntheticVideoOptions options_;
  double scale_;                          // pixels per body unit
  std::vector<Pose> poses_;               // one per frame
  std::vector<std::uint8_t> background_;  // BGR, width x height
  std::vector<std::uint8_t> sprite_;      // BGR mouse (no tail) facing +x, kSpriteSize^2
  std::vector<float> sprite_alpha_;       // its coverage, 0..1
  Box occluder_;
  std::vector<std::uint8_t> occluder_texture_;  // BGR, occluder width x height
};

/// Renders the whole video to `path` (H.264 .mp4, or per the extension) and returns every frame's
/// keypoints.
std::vector<std::vector<SyntheticKeypoint>> write_synthetic_video(
    const std::filesystem::path& path, const SyntheticVideoOptions& options);

}  // namespace labpose::pipeline
