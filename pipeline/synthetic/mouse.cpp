// The synthetic mouse: a path integrated from its own smooth random speed and turning (steered
// away from the walls), drawn on a stage whose occluder sits on the path.
#include "pipeline/synthetic/mouse.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "core/error.hpp"
#include "pipeline/synthetic/walk.hpp"

namespace labpose::pipeline {
namespace {
using synthetic::MousePose;

// The path: speed and turning rate vary smoothly; near a wall the mouse turns towards the middle
// of the arena. The body centre never comes closer to the frame edge than `inner`.
std::vector<MousePose> walk_alone(const SyntheticVideoOptions& options) {
  synthetic::check_video_options(options);
  const int width = options.width, height = options.height;
  const double scale = synthetic::body_scale(width, height);
  std::mt19937_64 random(options.seed);
  const double speed = 1.7 * scale, margin = 45 * scale, inner = 10 * scale;
  const synthetic::Wander wander(random);
  double x = synthetic::uniform(random, 0.35, 0.65) * width;
  double y = synthetic::uniform(random, 0.35, 0.65) * height;
  double heading = synthetic::uniform(random, -std::numbers::pi, std::numbers::pi);
  std::vector<MousePose> poses;
  poses.reserve(static_cast<std::size_t>(options.frames));
  for (int t = 0; t < options.frames; ++t) {
    poses.push_back({x, y, heading});
    const double turn = wander.turn(t) + synthetic::wall_turn(x, y, heading, width, height, margin);
    heading = synthetic::wrap_angle(heading + turn);
    const double step = speed * wander.speed_fraction(t);
    x = std::clamp(x + step * std::cos(heading), inner, width - 1 - inner);
    y = std::clamp(y + step * std::sin(heading), inner, height - 1 - inner);
  }
  return poses;
}

}  // namespace

SyntheticMouse::SyntheticMouse(const SyntheticVideoOptions& options)
    : SyntheticMouse(options, walk_alone(options)) {}

// The occluder is centred where the mouse is at 55 % of the video, so that it passes under it.
SyntheticMouse::SyntheticMouse(const SyntheticVideoOptions& options,
                               std::vector<synthetic::MousePose> poses)
    : options_(options),
      poses_(std::move(poses)),
      stage_(options, {1.0}, poses_[static_cast<std::size_t>(options.frames * 55 / 100)].x,
             poses_[static_cast<std::size_t>(options.frames * 55 / 100)].y) {}

std::vector<SyntheticKeypoint> SyntheticMouse::keypoints(int index) const {
  LABPOSE_ASSERT(index >= 0 && index < options_.frames);
  std::vector<SyntheticKeypoint> points =
      synthetic::keypoints_at(poses_[static_cast<std::size_t>(index)], stage_.scale());
  for (SyntheticKeypoint& point : points) {
    point.visible = point.x >= 0 && point.y >= 0 && point.x <= options_.width - 1 &&
                    point.y <= options_.height - 1 && !occluder().contains(point.x, point.y);
  }
  return points;
}

void SyntheticMouse::render(int index, std::uint8_t* bgr, std::size_t stride,
                            bool with_mouse) const {
  LABPOSE_ASSERT(index >= 0 && index < options_.frames);
  cv::Mat frame(options_.height, options_.width, CV_8UC3, bgr, stride);
  stage_.draw_floor(frame);
  if (with_mouse) stage_.draw_mouse(frame, 0, poses_[static_cast<std::size_t>(index)], index, 0.0);
  stage_.draw_occluder_and_noise(frame, index);
}

std::vector<std::vector<SyntheticKeypoint>> write_synthetic_video(
    const std::filesystem::path& path, const SyntheticVideoOptions& options) {
  const SyntheticMouse mouse(options);
  std::vector<std::vector<SyntheticKeypoint>> truth;
  truth.reserve(static_cast<std::size_t>(options.frames));
  synthetic::write_frames(path, options, [&](int index, std::uint8_t* bgr, std::size_t stride) {
    mouse.render(index, bgr, stride);
    truth.push_back(mouse.keypoints(index));
  });
  return truth;
}

}  // namespace labpose::pipeline
