// The scene of several mice: their paths (mice_paths), one stage for all (the occluder on the
// first mouse's path), the mice drawn back to front, and each keypoint's visibility from the same
// shapes the sprites cover.
#include "pipeline/synthetic/mice.hpp"

#include <fmt/core.h>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "pipeline/synthetic/mice_paths.hpp"

namespace labpose::pipeline {
namespace {

// The fur shades of distinct-looking mice: the first as the single mouse, the others spread over
// 0.8..1.2 by the golden ratio so that neighbours in the list differ most.
std::vector<double> fur_shades(const SyntheticMiceOptions& options) {
  if (!options.distinct_shades) return {1.0};
  std::vector<double> shades;
  for (int i = 0; i < options.animals; ++i) {
    const double spread = std::fmod(0.5 + 0.6180339887498949 * i, 1.0);
    shades.push_back(0.8 + 0.4 * spread);
  }
  return shades;
}

std::vector<std::vector<synthetic::MousePose>> checked_paths(const SyntheticMiceOptions& options) {
  if (options.animals < 1) {
    throw Error(
        fmt::format("a synthetic scene needs at least one mouse (asked for {})", options.animals));
  }
  return synthetic::walk_together(options.video, options.animals);
}

// The tails of different mice swing out of step.
double tail_phase(int individual) {
  return 1.7 * individual;
}

}  // namespace

std::vector<std::string> synthetic_individuals(int animals) {
  std::vector<std::string> names;
  for (int i = 1; i <= animals; ++i) names.push_back(fmt::format("mouse{}", i));
  return names;
}

SyntheticMice::SyntheticMice(const SyntheticMiceOptions& options)
    : SyntheticMice(options, checked_paths(options)) {}

// The occluder is centred where the first mouse is at 55 % of the video.
SyntheticMice::SyntheticMice(const SyntheticMiceOptions& options,
                             std::vector<std::vector<synthetic::MousePose>> paths)
    : options_(options),
      paths_(std::move(paths)),
      stage_(options.video, fur_shades(options),
             paths_.front()[static_cast<std::size_t>(options.video.frames * 55 / 100)].x,
             paths_.front()[static_cast<std::size_t>(options.video.frames * 55 / 100)].y) {}

const synthetic::MousePose& SyntheticMice::pose(int index, int individual) const {
  LABPOSE_ASSERT(index >= 0 && index < options_.video.frames);
  LABPOSE_ASSERT(individual >= 0 && individual < options_.animals);
  return paths_[static_cast<std::size_t>(individual)][static_cast<std::size_t>(index)];
}

std::vector<int> SyntheticMice::drawing_order(int index) const {
  std::vector<int> order(static_cast<std::size_t>(options_.animals));
  for (int i = 0; i < options_.animals; ++i) order[static_cast<std::size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return pose(index, a).y < pose(index, b).y; });
  return order;
}

bool SyntheticMice::on_body(int index, int individual, double x, double y) const {
  return synthetic::on_mouse_body(pose(index, individual), stage_.scale(), x, y);
}

std::vector<std::vector<SyntheticKeypoint>> SyntheticMice::keypoints(int index) const {
  const std::vector<int> order = drawing_order(index);
  std::vector<std::vector<SyntheticKeypoint>> animals(static_cast<std::size_t>(options_.animals));
  for (std::size_t rank = 0; rank < order.size(); ++rank) {
    const int individual = order[rank];
    std::vector<SyntheticKeypoint> points =
        synthetic::keypoints_at(pose(index, individual), stage_.scale());
    for (SyntheticKeypoint& point : points) {
      const bool covered =
          std::any_of(order.begin() + static_cast<long>(rank) + 1, order.end(),
                      [&](int above) { return on_body(index, above, point.x, point.y); });
      point.visible = point.x >= 0 && point.y >= 0 && point.x <= options_.video.width - 1 &&
                      point.y <= options_.video.height - 1 &&
                      !occluder().contains(point.x, point.y) && !covered;
    }
    animals[static_cast<std::size_t>(individual)] = std::move(points);
  }
  return animals;
}

void SyntheticMice::render(int index, std::uint8_t* bgr, std::size_t stride, bool with_mice) const {
  LABPOSE_ASSERT(index >= 0 && index < options_.video.frames);
  cv::Mat frame(options_.video.height, options_.video.width, CV_8UC3, bgr, stride);
  stage_.draw_floor(frame);
  if (with_mice) {
    for (const int individual : drawing_order(index)) {
      const std::size_t sprite =
          options_.distinct_shades ? static_cast<std::size_t>(individual) : 0;
      stage_.draw_mouse(frame, sprite, pose(index, individual), index, tail_phase(individual));
    }
  }
  stage_.draw_occluder_and_noise(frame, index);
}

SyntheticMiceTruth write_synthetic_mice_video(const std::filesystem::path& path,
                                              const SyntheticMiceOptions& options) {
  const SyntheticMice mice(options);
  SyntheticMiceTruth truth;
  truth.reserve(static_cast<std::size_t>(options.video.frames));
  synthetic::write_frames(path, options.video,
                          [&](int index, std::uint8_t* bgr, std::size_t stride) {
                            mice.render(index, bgr, stride);
                            truth.push_back(mice.keypoints(index));
                          });
  return truth;
}

}  // namespace labpose::pipeline
