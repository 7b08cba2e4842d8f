// The stage: a light, unevenly lit floor with blotches, grain and faint tile lines; the sprites;
// a grey block as the occluder; Gaussian sensor noise per frame. The textures are drawn from one
// random stream in a fixed order (floor, sprites, occluder), so a seed always gives the same video.
#include "pipeline/synthetic/stage.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <fmt/core.h>

#include <algorithm>

#include "core/error.hpp"
#include "pipeline/video/writer.hpp"

namespace labpose::pipeline::synthetic {
namespace {

std::vector<std::uint8_t> make_floor(cv::RNG& texture_random, int width, int height, double scale) {
  cv::Mat floor(height, width, CV_32FC1);
  texture_random.fill(floor, cv::RNG::NORMAL, 0, 1);
  cv::Mat blotches;
  cv::GaussianBlur(floor, blotches, cv::Size(), 9 * scale + 1);
  cv::normalize(blotches, blotches, -14, 14, cv::NORM_MINMAX);
  cv::Mat grain(height, width, CV_32FC1);
  texture_random.fill(grain, cv::RNG::NORMAL, 0, 7);
  cv::GaussianBlur(grain, grain, cv::Size(), 0.8);
  cv::Mat background(height, width, CV_8UC3);
  for (int row = 0; row < height; ++row) {
    for (int column = 0; column < width; ++column) {
      const double dx = (column - width / 2.0) / width, dy = (row - height / 2.0) / height;
      const double light = 1.0 - 0.45 * (dx * dx + dy * dy);
      const bool tile_line = column % static_cast<int>(40 * scale + 1) == 0 ||
                             row % static_cast<int>(40 * scale + 1) == 0;
      const double shade =
          blotches.at<float>(row, column) + grain.at<float>(row, column) - (tile_line ? 18 : 0);
      cv::Vec3b& pixel = background.at<cv::Vec3b>(row, column);
      pixel[0] = cv::saturate_cast<std::uint8_t>(light * 188 + shade);
      pixel[1] = cv::saturate_cast<std::uint8_t>(light * 196 + shade);
      pixel[2] = cv::saturate_cast<std::uint8_t>(light * 204 + shade);
    }
  }
  return std::vector<std::uint8_t>(background.data, background.data + background.total() * 3);
}

}  // namespace

void check_video_options(const SyntheticVideoOptions& options) {
  if (options.width < 64 || options.height < 48 || options.frames < 1 || !(options.fps > 0)) {
    throw Error(
        fmt::format("a synthetic video needs at least 64x48 pixels and one frame (asked "
                    "for {}x{}, {} frames)",
                    options.width, options.height, options.frames));
  }
}

void write_frames(const std::filesystem::path& path, const SyntheticVideoOptions& options,
                  const std::function<void(int, std::uint8_t*, std::size_t)>& render) {
  VideoWriter writer(path, {options.width, options.height, options.fps, "auto", 18});
  const std::size_t stride = static_cast<std::size_t>(options.width) * 3;
  std::vector<std::uint8_t> frame(stride * static_cast<std::size_t>(options.height));
  for (int index = 0; index < options.frames; ++index) {
    render(index, frame.data(), stride);
    writer.write_bgr(frame.data(), stride);
  }
  writer.close();
}

Stage::Stage(const SyntheticVideoOptions& options, const std::vector<double>& shades,
             double occluder_x, double occluder_y)
    : options_(options), scale_(body_scale(options.width, options.height)) {
  const int width = options.width, height = options.height;
  cv::RNG texture_random(static_cast<unsigned long long>(options.seed) * 2654435761ull + 17ull);
  floor_ = make_floor(texture_random, width, height, scale_);
  sprites_ = make_mouse_sprites(texture_random, scale_, shades);

  occluder_.width = std::max(8, static_cast<int>(26 * scale_));
  occluder_.height = std::max(8, static_cast<int>(64 * scale_));
  occluder_.x =
      std::clamp(static_cast<int>(occluder_x) - occluder_.width / 2, 0, width - occluder_.width);
  occluder_.y =
      std::clamp(static_cast<int>(occluder_y) - occluder_.height / 2, 0, height - occluder_.height);
  cv::Mat block(occluder_.height, occluder_.width, CV_8UC3);
  texture_random.fill(block, cv::RNG::UNIFORM, cv::Scalar(92, 96, 100), cv::Scalar(118, 122, 126));
  cv::rectangle(block, cv::Rect(0, 0, block.cols, block.rows), cv::Scalar(60, 62, 66), 2);
  occluder_texture_.assign(block.data, block.data + block.total() * 3);
}

void Stage::draw_floor(cv::Mat& frame) const {
  cv::Mat(options_.height, options_.width, CV_8UC3, const_cast<std::uint8_t*>(floor_.data()))
      .copyTo(frame);
}

void Stage::draw_mouse(cv::Mat& frame, std::size_t sprite, const MousePose& pose, int index,
                       double tail_phase) const {
  synthetic::draw_mouse(frame, sprites_.at(sprite), pose, scale_, index, tail_phase);
}

void Stage::draw_occluder_and_noise(cv::Mat& frame, int index) const {
  cv::Mat(occluder_.height, occluder_.width, CV_8UC3,
          const_cast<std::uint8_t*>(occluder_texture_.data()))
      .copyTo(frame(cv::Rect(occluder_.x, occluder_.y, occluder_.width, occluder_.height)));
  const unsigned long long noise_seed =
      static_cast<unsigned long long>(options_.seed) * 0x9E3779B97F4A7C15ull +
      static_cast<unsigned long long>(index) + 1ull;
  cv::RNG noise_random(noise_seed);
  cv::Mat noise(options_.height, options_.width, CV_16SC3);
  noise_random.fill(noise, cv::RNG::NORMAL, cv::Scalar::all(0), cv::Scalar::all(2.5));
  cv::add(frame, noise, frame, cv::noArray(), CV_8UC3);
}

}  // namespace labpose::pipeline::synthetic
