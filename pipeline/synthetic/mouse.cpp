// The synthetic mouse: a path integrated from smooth random speed and turning (steered away from
// the walls), a mouse sprite drawn once and placed per frame by an affine warp (the same warp
// places the keypoints), a tail drawn per frame, an occluder on the path, and sensor noise.
#include "pipeline/synthetic/mouse.hpp"

#include <fmt/core.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "core/error.hpp"
#include "pipeline/video/writer.hpp"

namespace labpose::pipeline {
namespace {

// The mouse in body units (1 unit = 1 pixel in a 320 px wide video), facing +x, centred on the
// body; y grows downwards as in images, so the mouse's left side is at negative y.
constexpr double kBodyLength = 22, kBodyWidth = 13.5;  // body ellipse half-axes
constexpr double kHeadX = 22, kHeadLength = 13, kHeadWidth = 9.5;
constexpr double kEarX = 17, kEarY = 10, kEarRadius = 5.5;
constexpr double kTailLength = 42;
constexpr double kSpriteUnits = 100;  // the sprite canvas, wide enough for the mouse at any angle

// Keypoints in body units, in synthetic_bodyparts() order.
constexpr double kKeypoints[4][2] = {
    {kHeadX + kHeadLength, 0},  // snout: the tip of the head
    {kEarX, -kEarY},            // leftear: centre of the left ear
    {kEarX, kEarY},             // rightear
    {-kBodyLength, 0},          // tailbase: the rear end of the body
};

const cv::Scalar kFurColor(58, 66, 78), kEarColor(130, 140, 215), kTailColor(150, 160, 196);

double uniform(std::mt19937_64& random, double low, double high) {
  return low + (high - low) * static_cast<double>(random() >> 11) * 0x1.0p-53;
}

double wrap_angle(double angle) {
  return std::remainder(angle, 2 * std::numbers::pi);
}

// OpenCV draws sub-pixel shapes with coordinates in 1/16 pixel.
constexpr int kShift = 4;
cv::Point fixed_point(double x, double y) {
  return {static_cast<int>(std::lround(x * 16)), static_cast<int>(std::lround(y * 16))};
}
cv::Size fixed_size(double width, double height) {
  return {static_cast<int>(std::lround(width * 16)), static_cast<int>(std::lround(height * 16))};
}

}  // namespace

const std::vector<std::string>& synthetic_bodyparts() {
  static const std::vector<std::string> names = {"snout", "leftear", "rightear", "tailbase"};
  return names;
}

bool SyntheticMouse::Box::contains(double px, double py) const {
  return px >= x - 0.5 && px <= x + width - 0.5 && py >= y - 0.5 && py <= y + height - 0.5;
}

SyntheticMouse::SyntheticMouse(const SyntheticVideoOptions& options) : options_(options) {
  if (options.width < 64 || options.height < 48 || options.frames < 1 || !(options.fps > 0)) {
    throw Error(
        fmt::format("a synthetic video needs at least 64x48 pixels and one frame (asked "
                    "for {}x{}, {} frames)",
                    options.width, options.height, options.frames));
  }
  const int width = options.width, height = options.height;
  scale_ = std::min(width / 320.0, height / 240.0);
  std::mt19937_64 random(options.seed);

  // The path: speed and turning rate vary smoothly; near a wall the mouse turns towards the
  // middle of the arena. The body centre never comes closer to the frame edge than `inner`.
  const double speed = 1.7 * scale_, margin = 45 * scale_, inner = 10 * scale_;
  const double speed_frequency = uniform(random, 0.004, 0.012), speed_phase = uniform(random, 0, 7);
  const double turn_frequency_1 = uniform(random, 0.003, 0.010),
               turn_frequency_2 = uniform(random, 0.015, 0.030);
  const double turn_phase_1 = uniform(random, 0, 7), turn_phase_2 = uniform(random, 0, 7);
  double x = uniform(random, 0.35, 0.65) * width, y = uniform(random, 0.35, 0.65) * height;
  double heading = uniform(random, -std::numbers::pi, std::numbers::pi);
  poses_.reserve(static_cast<std::size_t>(options.frames));
  for (int t = 0; t < options.frames; ++t) {
    poses_.push_back({x, y, heading});
    const double tau = 2 * std::numbers::pi * t;
    double turn = 0.055 * std::sin(tau * turn_frequency_1 + turn_phase_1) +
                  0.03 * std::sin(tau * turn_frequency_2 + turn_phase_2);
    const double to_wall = std::min({x, y, width - 1 - x, height - 1 - y});
    if (to_wall < margin) {
      const double towards_middle = std::atan2(height / 2.0 - y, width / 2.0 - x);
      turn += 0.15 * wrap_angle(towards_middle - heading) * (1 - to_wall / margin);
    }
    heading = wrap_angle(heading + turn);
    const double step = speed * (0.65 + 0.35 * std::sin(tau * speed_frequency + speed_phase));
    x = std::clamp(x + step * std::cos(heading), inner, width - 1 - inner);
    y = std::clamp(y + step * std::sin(heading), inner, height - 1 - inner);
  }

  // The arena floor: light, unevenly lit, with blotches, fine grain and faint tile lines.
  cv::RNG texture_random(static_cast<unsigned long long>(options.seed) * 2654435761ull + 17ull);
  cv::Mat floor(height, width, CV_32FC1);
  texture_random.fill(floor, cv::RNG::NORMAL, 0, 1);
  cv::Mat blotches;
  cv::GaussianBlur(floor, blotches, cv::Size(), 9 * scale_ + 1);
  cv::normalize(blotches, blotches, -14, 14, cv::NORM_MINMAX);
  cv::Mat grain(height, width, CV_32FC1);
  texture_random.fill(grain, cv::RNG::NORMAL, 0, 7);
  cv::GaussianBlur(grain, grain, cv::Size(), 0.8);
  cv::Mat background(height, width, CV_8UC3);
  for (int row = 0; row < height; ++row) {
    for (int column = 0; column < width; ++column) {
      const double dx = (column - width / 2.0) / width, dy = (row - height / 2.0) / height;
      const double light = 1.0 - 0.45 * (dx * dx + dy * dy);
      const bool tile_line = column % static_cast<int>(40 * scale_ + 1) == 0 ||
                             row % static_cast<int>(40 * scale_ + 1) == 0;
      const double shade =
          blotches.at<float>(row, column) + grain.at<float>(row, column) - (tile_line ? 18 : 0);
      cv::Vec3b& pixel = background.at<cv::Vec3b>(row, column);
      pixel[0] = cv::saturate_cast<std::uint8_t>(light * 188 + shade);
      pixel[1] = cv::saturate_cast<std::uint8_t>(light * 196 + shade);
      pixel[2] = cv::saturate_cast<std::uint8_t>(light * 204 + shade);
    }
  }
  background_.assign(background.data, background.data + background.total() * 3);

  // The mouse sprite (without the tail, which bends): textured fur, pink ears, eyes and nose.
  const int size = static_cast<int>(std::ceil(kSpriteUnits * scale_)) | 1;
  const double centre = (size - 1) / 2.0;
  const auto at = [&](double ux, double uy) {
    return fixed_point(centre + ux * scale_, centre + uy * scale_);
  };
  cv::Mat fur(size, size, CV_32FC3);
  texture_random.fill(fur, cv::RNG::NORMAL, cv::Scalar::all(0), cv::Scalar::all(16));
  cv::GaussianBlur(fur, fur, cv::Size(), 1.2 * scale_ + 0.3);
  cv::Mat sprite(size, size, CV_8UC3);
  for (int row = 0; row < size; ++row) {
    for (int column = 0; column < size; ++column) {
      const cv::Vec3f noise = fur.at<cv::Vec3f>(row, column);
      // darker along the spine
      const double spine = 1.0 - 0.35 * std::exp(-std::pow((row - centre) / (5 * scale_), 2));
      cv::Vec3b& pixel = sprite.at<cv::Vec3b>(row, column);
      for (int c = 0; c < 3; ++c)
        pixel[c] =
            cv::saturate_cast<std::uint8_t>(kFurColor[c] * spine + static_cast<double>(noise[c]));
    }
  }
  cv::Mat mask(size, size, CV_8UC1, cv::Scalar(0));
  cv::ellipse(mask, at(0, 0), fixed_size(kBodyLength * scale_, kBodyWidth * scale_), 0, 0, 360,
              cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
  cv::ellipse(mask, at(kHeadX, 0), fixed_size(kHeadLength * scale_, kHeadWidth * scale_), 0, 0, 360,
              cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
  for (const double side : {-1.0, 1.0}) {
    const cv::Point ear = at(kEarX, side * kEarY);
    const int radius = static_cast<int>(std::lround(kEarRadius * scale_ * 16));
    cv::circle(mask, ear, radius, cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
    cv::circle(sprite, ear, radius, kEarColor, cv::FILLED, cv::LINE_AA, kShift);
    cv::circle(sprite, ear, radius * 6 / 10, kEarColor * 0.8, cv::FILLED, cv::LINE_AA, kShift);
  }
  // The head, a little lighter, over the ears' inner halves as seen from above; then eyes, nose.
  cv::Mat head(size, size, CV_8UC1, cv::Scalar(0));
  cv::ellipse(head, at(kHeadX, 0), fixed_size(kHeadLength * scale_, kHeadWidth * scale_ * 0.75), 0,
              0, 360, cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
  for (int row = 0; row < size; ++row) {
    for (int column = 0; column < size; ++column) {
      const float cover = head.at<std::uint8_t>(row, column) / 255.0f;
      if (cover <= 0) continue;
      cv::Vec3b& pixel = sprite.at<cv::Vec3b>(row, column);
      const cv::Vec3f noise = fur.at<cv::Vec3f>(row, column);
      for (int c = 0; c < 3; ++c) {
        const float furred = static_cast<float>(kFurColor[c]) * 1.15f + noise[c];
        pixel[c] = cv::saturate_cast<std::uint8_t>(pixel[c] * (1 - cover) + furred * cover);
      }
    }
  }
  const int dot = static_cast<int>(std::lround(1.8 * scale_ * 16));
  for (const double side : {-1.0, 1.0}) {
    cv::circle(sprite, at(kHeadX + 5, side * 5), dot, cv::Scalar(15, 15, 20), cv::FILLED,
               cv::LINE_AA, kShift);
  }
  cv::circle(sprite, at(kHeadX + kHeadLength - 1.5, 0), dot, cv::Scalar(110, 110, 185), cv::FILLED,
             cv::LINE_AA, kShift);
  sprite_.assign(sprite.data, sprite.data + sprite.total() * 3);
  sprite_alpha_.resize(static_cast<std::size_t>(size) * static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < sprite_alpha_.size(); ++i) sprite_alpha_[i] = mask.data[i] / 255.0f;

  // The occluder: a grey block on the mouse's path (centred where the mouse is at 55 % of the
  // video), so that the mouse passes under it.
  const Pose& under = poses_[static_cast<std::size_t>(options.frames * 55 / 100)];
  occluder_.width = std::max(8, static_cast<int>(26 * scale_));
  occluder_.height = std::max(8, static_cast<int>(64 * scale_));
  occluder_.x =
      std::clamp(static_cast<int>(under.x) - occluder_.width / 2, 0, width - occluder_.width);
  occluder_.y =
      std::clamp(static_cast<int>(under.y) - occluder_.height / 2, 0, height - occluder_.height);
  cv::Mat block(occluder_.height, occluder_.width, CV_8UC3);
  texture_random.fill(block, cv::RNG::UNIFORM, cv::Scalar(92, 96, 100), cv::Scalar(118, 122, 126));
  cv::rectangle(block, cv::Rect(0, 0, block.cols, block.rows), cv::Scalar(60, 62, 66), 2);
  occluder_texture_.assign(block.data, block.data + block.total() * 3);
}

std::vector<SyntheticKeypoint> SyntheticMouse::keypoints(int index) const {
  LABPOSE_ASSERT(index >= 0 && index < options_.frames);
  const Pose& pose = poses_[static_cast<std::size_t>(index)];
  const double c = std::cos(pose.heading), s = std::sin(pose.heading);
  std::vector<SyntheticKeypoint> points;
  for (const auto& unit : kKeypoints) {
    SyntheticKeypoint point;
    point.x = pose.x + scale_ * (c * unit[0] - s * unit[1]);
    point.y = pose.y + scale_ * (s * unit[0] + c * unit[1]);
    point.visible = point.x >= 0 && point.y >= 0 && point.x <= options_.width - 1 &&
                    point.y <= options_.height - 1 && !occluder_.contains(point.x, point.y);
    points.push_back(point);
  }
  return points;
}

void SyntheticMouse::render(int index, std::uint8_t* bgr, std::size_t stride,
                            bool with_mouse) const {
  LABPOSE_ASSERT(index >= 0 && index < options_.frames);
  const int width = options_.width, height = options_.height;
  cv::Mat frame(height, width, CV_8UC3, bgr, stride);
  cv::Mat(height, width, CV_8UC3, const_cast<std::uint8_t*>(background_.data())).copyTo(frame);
  const Pose& pose = poses_[static_cast<std::size_t>(index)];
  const double c = std::cos(pose.heading), s = std::sin(pose.heading);

  if (with_mouse) {
    // The tail: from the tail base backwards, swinging gently, thinner towards the tip.
    std::vector<cv::Point2d> tail;
    constexpr int kSegments = 14;
    for (int k = 0; k <= kSegments; ++k) {
      const double along = -kBodyLength - kTailLength * k / kSegments;
      const double swing =
          7.0 * std::sin(0.21 * index + 0.45 * k) * (static_cast<double>(k) / kSegments);
      tail.emplace_back(pose.x + scale_ * (c * along - s * swing),
                        pose.y + scale_ * (s * along + c * swing));
    }
    for (int k = 0; k < kSegments; ++k) {
      const int thickness =
          std::max(1, static_cast<int>(std::lround((4.0 - 3.0 * k / kSegments) * scale_)));
      cv::line(
          frame,
          fixed_point(tail[static_cast<std::size_t>(k)].x, tail[static_cast<std::size_t>(k)].y),
          fixed_point(tail[static_cast<std::size_t>(k) + 1].x,
                      tail[static_cast<std::size_t>(k) + 1].y),
          kTailColor, thickness, cv::LINE_AA, kShift);
    }

    // The body: the sprite rotated and moved into place (sprite pixel p -> R (p - centre) + pose),
    // blended by its coverage, with a soft shadow first.
    const int size = static_cast<int>(std::sqrt(static_cast<double>(sprite_alpha_.size())));
    const double centre = (size - 1) / 2.0;
    const int reach = size / 2 + 2;
    const cv::Rect box = cv::Rect(static_cast<int>(pose.x) - reach,
                                  static_cast<int>(pose.y) - reach, 2 * reach + 1, 2 * reach + 1) &
                         cv::Rect(0, 0, width, height);
    cv::Matx23d to_box(c, -s, pose.x - box.x - (c * centre - s * centre), s, c,
                       pose.y - box.y - (s * centre + c * centre));
    cv::Mat sprite(size, size, CV_8UC3, const_cast<std::uint8_t*>(sprite_.data()));
    cv::Mat alpha(size, size, CV_32FC1, const_cast<float*>(sprite_alpha_.data()));
    cv::Mat warped, coverage, shadow;
    cv::warpAffine(sprite, warped, to_box, box.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT);
    cv::warpAffine(alpha, coverage, to_box, box.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT);
    cv::GaussianBlur(coverage, shadow, cv::Size(), 2.5 * scale_);
    cv::Mat region = frame(box);
    for (int row = 0; row < box.height; ++row) {
      for (int column = 0; column < box.width; ++column) {
        const int shadow_row = std::max(0, row - static_cast<int>(3 * scale_));
        const int shadow_column = std::max(0, column - static_cast<int>(3 * scale_));
        const float dark = 1.0f - 0.35f * shadow.at<float>(shadow_row, shadow_column);
        const float a = coverage.at<float>(row, column);
        cv::Vec3b& pixel = region.at<cv::Vec3b>(row, column);
        const cv::Vec3b& mouse = warped.at<cv::Vec3b>(row, column);
        for (int ch = 0; ch < 3; ++ch) {
          pixel[ch] = cv::saturate_cast<std::uint8_t>(pixel[ch] * dark * (1 - a) + mouse[ch] * a);
        }
      }
    }
  }

  // The occluder over everything, then sensor noise.
  cv::Mat(occluder_.height, occluder_.width, CV_8UC3,
          const_cast<std::uint8_t*>(occluder_texture_.data()))
      .copyTo(frame(cv::Rect(occluder_.x, occluder_.y, occluder_.width, occluder_.height)));
  const unsigned long long noise_seed =
      static_cast<unsigned long long>(options_.seed) * 0x9E3779B97F4A7C15ull +
      static_cast<unsigned long long>(index) + 1ull;
  cv::RNG noise_random(noise_seed);
  cv::Mat noise(height, width, CV_16SC3);
  noise_random.fill(noise, cv::RNG::NORMAL, cv::Scalar::all(0), cv::Scalar::all(2.5));
  cv::add(frame, noise, frame, cv::noArray(), CV_8UC3);
}

std::vector<std::vector<SyntheticKeypoint>> write_synthetic_video(
    const std::filesystem::path& path, const SyntheticVideoOptions& options) {
  const SyntheticMouse mouse(options);
  VideoWriter writer(path, {options.width, options.height, options.fps, "auto", 18});
  std::vector<std::uint8_t> frame(static_cast<std::size_t>(options.width) *
                                  static_cast<std::size_t>(options.height) * 3);
  std::vector<std::vector<SyntheticKeypoint>> truth;
  truth.reserve(static_cast<std::size_t>(options.frames));
  for (int index = 0; index < options.frames; ++index) {
    mouse.render(index, frame.data(), static_cast<std::size_t>(options.width) * 3);
    writer.write_bgr(frame.data(), static_cast<std::size_t>(options.width) * 3);
    truth.push_back(mouse.keypoints(index));
  }
  writer.close();
  return truth;
}

}  // namespace labpose::pipeline
