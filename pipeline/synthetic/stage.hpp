// The stage of a synthetic video: the arena floor, the mouse sprites and the occluding block,
// made once from the seed, and the steps of drawing a frame on it (floor, mice, occluder, sensor
// noise). Not where the mice go: the single mouse and the scenes of several give their poses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <vector>

#include "pipeline/synthetic/ground_truth.hpp"
#include "pipeline/synthetic/mouse_body.hpp"

namespace labpose::pipeline::synthetic {

/// Throws Error unless the video has at least 64x48 pixels, one frame and a positive frame rate.
void check_video_options(const SyntheticVideoOptions& options);

/// Writes options.frames frames to `path` (H.264 .mp4, or per the extension), each drawn by
/// `render(index, bgr, stride)` into one reused BGR buffer of the video's size.
void write_frames(const std::filesystem::path& path, const SyntheticVideoOptions& options,
                  const std::function<void(int, std::uint8_t*, std::size_t)>& render);

class Stage {
 public:
  /// Makes the floor, one sprite per shade (see make_mouse_sprites) and the occluder centred on
  /// (occluder_x, occluder_y) pixels, moved inside the frame; their textures come from the seed.
  Stage(const SyntheticVideoOptions& options, const std::vector<double>& shades, double occluder_x,
        double occluder_y);

  double scale() const { return scale_; }
  const SyntheticBox& occluder() const { return occluder_; }

  /// Copies the floor into `frame` (CV_8UC3, the video's size).
  void draw_floor(cv::Mat& frame) const;
  /// Draws mouse `sprite` (an index into the shades) at `pose`; see draw_mouse.
  void draw_mouse(cv::Mat& frame, std::size_t sprite, const MousePose& pose, int index,
                  double tail_phase) const;
  /// Draws the occluder over everything, then adds the sensor noise of frame `index`.
  void draw_occluder_and_noise(cv::Mat& frame, int index) const;

 private:
  SyntheticVideoOptions options_;
  double scale_;                      // pixels per body unit
  std::vector<std::uint8_t> floor_;   // BGR, width x height
  std::vector<MouseSprite> sprites_;  // one per shade
  SyntheticBox occluder_;
  std::vector<std::uint8_t> occluder_texture_;  // BGR, occluder width x height
};

}  // namespace labpose::pipeline::synthetic
