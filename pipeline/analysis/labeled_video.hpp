// labpose labeled-video, DeepLabCut's create_labeled_video in its fast mode
// (reference/dlc-format.md §6.11): each frame of the video with the keypoints whose likelihood is
// above pcutoff as filled disks in the colormap's colours (one per bodypart, or for tracks of
// several animals one per individual, DeepLabCut's color_by), optionally the skeleton of each
// animal (both ends above pcutoff) and a trail of earlier positions, and each animal's name beside
// it, written as H.264 beside the tracks; for several animals optionally every detection before
// tracking (the candidates of _full.pickle, DeepLabCut's create_video_with_all_detections) as small
// neutral dots beneath the tracks. Not the matplotlib mode.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/assembly/candidates.hpp"
#include "pipeline/plots/colormap.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

struct TrackColumns;

/// What one colour stands for (DeepLabCut's color_by).
enum class ColorBy { bodypart, individual };

/// "bodypart" or "individual"; a UsageError naming --color-by otherwise.
ColorBy parse_color_by(const std::string& text);

struct LabeledVideoOptions {
  double pcutoff = 0.6;
  int dotsize = 12;                  // disk radius in pixels
  std::string colormap = "rainbow";  // one colour per bodypart or per individual
  ColorBy color_by = ColorBy::bodypart;
  bool names = true;  // tracks of several animals: each individual's name beside it
  bool skeleton = false;
  std::vector<std::pair<std::string, std::string>> skeleton_edges;  // bodypart names
  std::string skeleton_color = "black";
  int trail = 0;               // draw the positions of the previous trail-1 frames too (0: none)
  int crop_x = 0, crop_y = 0;  // added to the coordinates (tracks of a cropped analysis)
  /// detections[i]: frame i's candidates (read_full_pickle_candidates), each drawn beneath the
  /// tracks as a small light grey dot when its confidence is at least pcutoff; empty: none.
  std::vector<Candidates> detections;
};

/// Where an individual's name goes in frame `row`: its topmost keypoint above pcutoff (nothing when
/// none is).
struct NameTag {
  double x = 0, y = 0;
};
std::optional<NameTag> name_tag(const projects::Table& tracks, std::size_t row,
                                const std::vector<TrackColumns>& columns,
                                const std::string& individual, double pcutoff);

/// Draws `tracks` (rows = frames; columns scorer/bodyparts/coords or
/// scorer/individuals/bodyparts/coords, x, y, likelihood) onto `video`
/// and writes `output` (atomically: the video writer renames when done). Frames without a row are
/// copied as they are. Returns the frames written.
std::int64_t write_labeled_video(const std::filesystem::path& video, const projects::Table& tracks,
                                 const LabeledVideoOptions& options,
                                 const std::filesystem::path& output);

}  // namespace labpose::pipeline
