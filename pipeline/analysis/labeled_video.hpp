// labpose labeled-video, DeepLabCut's create_labeled_video in its fast mode
// (reference/dlc-format.md §6.11) for single-animal tracks: each frame of the video with the
// keypoints whose likelihood is above pcutoff as filled disks in the colormap's colours, optionally
// the skeleton (both ends above pcutoff) and a trail of earlier positions, written as H.264 beside
// the tracks. Not the matplotlib mode, not multi-animal colouring.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/plots/colormap.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

struct LabeledVideoOptions {
  double pcutoff = 0.6;
  int dotsize = 12;                  // disk radius in pixels
  std::string colormap = "rainbow";  // one colour per bodypart
  bool skeleton = false;
  std::vector<std::pair<std::string, std::string>> skeleton_edges;  // bodypart names
  std::string skeleton_color = "black";
  int trail = 0;               // draw the positions of the previous trail-1 frames too (0: none)
  int crop_x = 0, crop_y = 0;  // added to the coordinates (tracks of a cropped analysis)
};

/// Draws `tracks` (rows = frames; columns scorer/bodyparts/coords x, y, likelihood) onto `video`
/// and writes `output` (atomically: the video writer renames when done). Frames without a row are
/// copied as they are. Returns the frames written.
std::int64_t write_labeled_video(const std::filesystem::path& video, const projects::Table& tracks,
                                 const LabeledVideoOptions& options,
                                 const std::filesystem::path& output);

}  // namespace labpose::pipeline
