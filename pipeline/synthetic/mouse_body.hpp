// The synthetic mouse's body: its shape in body units, where its keypoints and its body lie for a
// pose, its sprite (textured fur, ears, eyes, nose, in a shade of the fur colour) and how it is
// drawn into a frame (tail, shadow, body). Shared by the single mouse and the scenes of several.
// Not a path, the arena floor or the occluder (pipeline/synthetic/stage).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pipeline/synthetic/ground_truth.hpp"

namespace cv {
class Mat;
class RNG;
}  // namespace cv

namespace labpose::pipeline::synthetic {

/// Where a mouse is: its body centre (pixels) and the direction of its snout (radians).
struct MousePose {
  double x = 0, y = 0, heading = 0;
};

/// Pixels per body unit for a video of width x height (1 at 320x240).
double body_scale(int width, int height);

/// The keypoints of a mouse at `pose` (pixels, synthetic_bodyparts() order), all marked visible.
std::vector<SyntheticKeypoint> keypoints_at(const MousePose& pose, double scale);

/// Whether the point (x, y) in pixels lies on the body, head or ears of a mouse at `pose` (the
/// shapes the sprite covers, not the thin tail).
bool on_mouse_body(const MousePose& pose, double scale, double x, double y);

/// Discs (centre along the body axis and radius, body units) that together cover the body and
/// head: what keeps mice from walking through each other.
struct BodyDisc {
  double along, radius;
};
const std::vector<BodyDisc>& body_discs();

/// The mouse drawn once, facing +x, without its tail: BGR and coverage (0..1), size x size.
struct MouseSprite {
  int size = 0;
  std::vector<std::uint8_t> bgr;
  std::vector<float> alpha;
};

/// One sprite per shade (fur colour times the shade: 1 is the usual mouse), all with one fur
/// texture drawn from `texture_random`.
std::vector<MouseSprite> make_mouse_sprites(cv::RNG& texture_random, double scale,
                                            const std::vector<double>& shades);

/// Draws a mouse at `pose` into `frame` (CV_8UC3): the tail, swinging with frame `index` (shifted
/// by `tail_phase` radians), then a soft shadow and the sprite blended by its coverage.
void draw_mouse(cv::Mat& frame, const MouseSprite& sprite, const MousePose& pose, double scale,
                int index, double tail_phase);

}  // namespace labpose::pipeline::synthetic
