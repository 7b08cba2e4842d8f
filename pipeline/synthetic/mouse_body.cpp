// The synthetic mouse's body: a sprite drawn once (textured fur, ears, eyes, nose) and placed per
// frame by an affine warp (the same transform places the keypoints), and a tail drawn per frame.
#include "pipeline/synthetic/mouse_body.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

namespace labpose::pipeline {
namespace synthetic {
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

// OpenCV draws sub-pixel shapes with coordinates in 1/16 pixel.
constexpr int kShift = 4;
cv::Point fixed_point(double x, double y) {
  return {static_cast<int>(std::lround(x * 16)), static_cast<int>(std::lround(y * 16))};
}
cv::Size fixed_size(double width, double height) {
  return {static_cast<int>(std::lround(width * 16)), static_cast<int>(std::lround(height * 16))};
}

// The sprite of one fur colour over the shared fur texture `fur` (CV_32FC3 noise).
MouseSprite make_sprite(const cv::Mat& fur, double scale, const cv::Scalar& fur_color) {
  const int size = fur.rows;
  const double centre = (size - 1) / 2.0;
  const auto at = [&](double ux, double uy) {
    return fixed_point(centre + ux * scale, centre + uy * scale);
  };
  cv::Mat sprite(size, size, CV_8UC3);
  for (int row = 0; row < size; ++row) {
    for (int column = 0; column < size; ++column) {
      const cv::Vec3f noise = fur.at<cv::Vec3f>(row, column);
      // darker along the spine
      const double spine = 1.0 - 0.35 * std::exp(-std::pow((row - centre) / (5 * scale), 2));
      cv::Vec3b& pixel = sprite.at<cv::Vec3b>(row, column);
      for (int c = 0; c < 3; ++c)
        pixel[c] =
            cv::saturate_cast<std::uint8_t>(fur_color[c] * spine + static_cast<double>(noise[c]));
    }
  }
  cv::Mat mask(size, size, CV_8UC1, cv::Scalar(0));
  cv::ellipse(mask, at(0, 0), fixed_size(kBodyLength * scale, kBodyWidth * scale), 0, 0, 360,
              cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
  cv::ellipse(mask, at(kHeadX, 0), fixed_size(kHeadLength * scale, kHeadWidth * scale), 0, 0, 360,
              cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
  for (const double side : {-1.0, 1.0}) {
    const cv::Point ear = at(kEarX, side * kEarY);
    const int radius = static_cast<int>(std::lround(kEarRadius * scale * 16));
    cv::circle(mask, ear, radius, cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
    cv::circle(sprite, ear, radius, kEarColor, cv::FILLED, cv::LINE_AA, kShift);
    cv::circle(sprite, ear, radius * 6 / 10, kEarColor * 0.8, cv::FILLED, cv::LINE_AA, kShift);
  }
  // The head, a little lighter, over the ears' inner halves as seen from above; then eyes, nose.
  cv::Mat head(size, size, CV_8UC1, cv::Scalar(0));
  cv::ellipse(head, at(kHeadX, 0), fixed_size(kHeadLength * scale, kHeadWidth * scale * 0.75), 0, 0,
              360, cv::Scalar(255), cv::FILLED, cv::LINE_AA, kShift);
  for (int row = 0; row < size; ++row) {
    for (int column = 0; column < size; ++column) {
      const float cover = head.at<std::uint8_t>(row, column) / 255.0f;
      if (cover <= 0) continue;
      cv::Vec3b& pixel = sprite.at<cv::Vec3b>(row, column);
      const cv::Vec3f noise = fur.at<cv::Vec3f>(row, column);
      for (int c = 0; c < 3; ++c) {
        const float furred = static_cast<float>(fur_color[c]) * 1.15f + noise[c];
        pixel[c] = cv::saturate_cast<std::uint8_t>(pixel[c] * (1 - cover) + furred * cover);
      }
    }
  }
  const int dot = static_cast<int>(std::lround(1.8 * scale * 16));
  for (const double side : {-1.0, 1.0}) {
    cv::circle(sprite, at(kHeadX + 5, side * 5), dot, cv::Scalar(15, 15, 20), cv::FILLED,
               cv::LINE_AA, kShift);
  }
  cv::circle(sprite, at(kHeadX + kHeadLength - 1.5, 0), dot, cv::Scalar(110, 110, 185), cv::FILLED,
             cv::LINE_AA, kShift);
  MouseSprite made;
  made.size = size;
  made.bgr.assign(sprite.data, sprite.data + sprite.total() * 3);
  made.alpha.resize(static_cast<std::size_t>(size) * static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < made.alpha.size(); ++i) made.alpha[i] = mask.data[i] / 255.0f;
  return made;
}

// The tail: from the tail base backwards, swinging gently, thinner towards the tip.
void draw_tail(cv::Mat& frame, const MousePose& pose, double scale, int index, double tail_phase) {
  const double c = std::cos(pose.heading), s = std::sin(pose.heading);
  std::vector<cv::Point2d> tail;
  constexpr int kSegments = 14;
  for (int k = 0; k <= kSegments; ++k) {
    const double along = -kBodyLength - kTailLength * k / kSegments;
    const double swing =
        7.0 * std::sin(0.21 * index + 0.45 * k + tail_phase) * (static_cast<double>(k) / kSegments);
    tail.emplace_back(pose.x + scale * (c * along - s * swing),
                      pose.y + scale * (s * along + c * swing));
  }
  for (int k = 0; k < kSegments; ++k) {
    const int thickness =
        std::max(1, static_cast<int>(std::lround((4.0 - 3.0 * k / kSegments) * scale)));
    cv::line(frame,
             fixed_point(tail[static_cast<std::size_t>(k)].x, tail[static_cast<std::size_t>(k)].y),
             fixed_point(tail[static_cast<std::size_t>(k) + 1].x,
                         tail[static_cast<std::size_t>(k) + 1].y),
             kTailColor, thickness, cv::LINE_AA, kShift);
  }
}

}  // namespace

double body_scale(int width, int height) {
  return std::min(width / 320.0, height / 240.0);
}

std::vector<SyntheticKeypoint> keypoints_at(const MousePose& pose, double scale) {
  const double c = std::cos(pose.heading), s = std::sin(pose.heading);
  std::vector<SyntheticKeypoint> points;
  for (const auto& unit : kKeypoints) {
    SyntheticKeypoint point;
    point.x = pose.x + scale * (c * unit[0] - s * unit[1]);
    point.y = pose.y + scale * (s * unit[0] + c * unit[1]);
    points.push_back(point);
  }
  return points;
}

bool on_mouse_body(const MousePose& pose, double scale, double x, double y) {
  // Into body units: undo the move and the rotation.
  const double c = std::cos(pose.heading), s = std::sin(pose.heading);
  const double dx = (x - pose.x) / scale, dy = (y - pose.y) / scale;
  const double along = c * dx + s * dy, across = -s * dx + c * dy;
  const auto in_ellipse = [](double u, double v, double a, double b) {
    return (u / a) * (u / a) + (v / b) * (v / b) <= 1;
  };
  return in_ellipse(along, across, kBodyLength, kBodyWidth) ||
         in_ellipse(along - kHeadX, across, kHeadLength, kHeadWidth) ||
         std::hypot(along - kEarX, across + kEarY) <= kEarRadius ||
         std::hypot(along - kEarX, across - kEarY) <= kEarRadius;
}

const std::vector<BodyDisc>& body_discs() {
  // The rear and front of the body ellipse, and the head to just short of the snout.
  static const std::vector<BodyDisc> discs = {{-10, 12.5}, {7, 13}, {24, 9}};
  return discs;
}

std::vector<MouseSprite> make_mouse_sprites(cv::RNG& texture_random, double scale,
                                            const std::vector<double>& shades) {
  const int size = static_cast<int>(std::ceil(kSpriteUnits * scale)) | 1;
  cv::Mat fur(size, size, CV_32FC3);
  texture_random.fill(fur, cv::RNG::NORMAL, cv::Scalar::all(0), cv::Scalar::all(16));
  cv::GaussianBlur(fur, fur, cv::Size(), 1.2 * scale + 0.3);
  std::vector<MouseSprite> sprites;
  for (const double shade : shades) sprites.push_back(make_sprite(fur, scale, kFurColor * shade));
  return sprites;
}

void draw_mouse(cv::Mat& frame, const MouseSprite& sprite, const MousePose& pose, double scale,
                int index, double tail_phase) {
  draw_tail(frame, pose, scale, index, tail_phase);
  // The body: the sprite rotated and moved into place (sprite pixel p -> R (p - centre) + pose),
  // blended by its coverage, with a soft shadow first.
  const double c = std::cos(pose.heading), s = std::sin(pose.heading);
  const int size = sprite.size;
  const double centre = (size - 1) / 2.0;
  const int reach = size / 2 + 2;
  const cv::Rect box = cv::Rect(static_cast<int>(pose.x) - reach, static_cast<int>(pose.y) - reach,
                                2 * reach + 1, 2 * reach + 1) &
                       cv::Rect(0, 0, frame.cols, frame.rows);
  cv::Matx23d to_box(c, -s, pose.x - box.x - (c * centre - s * centre), s, c,
                     pose.y - box.y - (s * centre + c * centre));
  const cv::Mat bgr(size, size, CV_8UC3, const_cast<std::uint8_t*>(sprite.bgr.data()));
  const cv::Mat alpha(size, size, CV_32FC1, const_cast<float*>(sprite.alpha.data()));
  cv::Mat warped, coverage, shadow;
  cv::warpAffine(bgr, warped, to_box, box.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT);
  cv::warpAffine(alpha, coverage, to_box, box.size(), cv::INTER_LINEAR, cv::BORDER_CONSTANT);
  cv::GaussianBlur(coverage, shadow, cv::Size(), 2.5 * scale);
  cv::Mat region = frame(box);
  for (int row = 0; row < box.height; ++row) {
    for (int column = 0; column < box.width; ++column) {
      const int shadow_row = std::max(0, row - static_cast<int>(3 * scale));
      const int shadow_column = std::max(0, column - static_cast<int>(3 * scale));
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

}  // namespace synthetic

const std::vector<std::string>& synthetic_bodyparts() {
  static const std::vector<std::string> names = {"snout", "leftear", "rightear", "tailbase"};
  return names;
}

bool SyntheticBox::contains(double px, double py) const {
  return px >= x - 0.5 && px <= x + width - 0.5 && py >= y - 0.5 && py <= y + height - 0.5;
}

}  // namespace labpose::pipeline
