// Frame extraction for labeling, DeepLabCut's extract_frames (reference/dlc-format.md §6.3):
// frames from each video's start..stop fraction, picked at random ("uniform") or one per k-means
// cluster of downsampled frames ("kmeans"), written as labeled-data/<stem>/img<index>.png (RGB,
// 8 bit). Frames already in the folder, as images or as label rows, are never picked again or
// overwritten; a run that fails removes what it wrote. Not the labeling tool; outlier extraction
// (pipeline/analysis/outliers) finds its candidate frames from predictions and picks among them
// here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace labpose::projects {
class ProjectConfig;
}

namespace labpose::pipeline {

enum class FrameSelection { uniform, kmeans };

struct ExtractFramesOptions {
  FrameSelection selection = FrameSelection::kmeans;
  std::optional<int> frames;        // new frames per video; config.yaml's numframes2pick if unset
  bool crop = false;                // crop to each video's video_sets crop box
  std::vector<std::string> videos;  // video_sets paths, file names or stems; empty: every video
  int cluster_resize_width = 30;    // k-means: frames shrunk to this width (nearest neighbour)
  bool cluster_color = false;       // k-means: cluster colour instead of grey
  std::uint64_t seed = 0;
  int threads = 0;  // decoder threads; 0 = one per core
};

/// k-means reads at most this many bytes of downsampled frames (float) per video: for longer
/// videos it clusters evenly spaced candidates (30x23 grey: 24,000 frames; colour: 8,000).
constexpr std::size_t kClusterMemoryBytes = std::size_t{64} << 20;

struct ExtractedVideo {
  std::string stem;
  std::filesystem::path video;            // the file read
  std::filesystem::path folder;           // labeled-data/<stem>
  std::int64_t frame_count = 0;           // frames in the video
  std::int64_t already_there = 0;         // frames of the range found in the folder
  std::int64_t candidates = 0;            // frames considered for selection
  std::vector<std::int64_t> frames;       // indices written, ascending
  std::vector<std::int64_t> undecodable;  // candidates that could not be decoded
};

/// Extracts frames from the project's videos (options.videos, or all of video_sets), checking
/// every video before writing anything. Throws Error naming the video or file on failure, after
/// removing the frames and folders this call created.
std::vector<ExtractedVideo> extract_frames(const projects::ProjectConfig& config,
                                           const ExtractFramesOptions& options);

/// The same for one video of the project (`video`: its video_sets path, file name or stem), picking
/// among `candidates` only (frame indices, e.g. outlier frames): those in the start..stop range and
/// not yet in the folder. options.videos is ignored. `check_frame_count`, when given, sees the
/// video's frame count before anything is written (and may throw to stop).
ExtractedVideo extract_frames_among(
    const projects::ProjectConfig& config, const std::string& video,
    std::vector<std::int64_t> candidates, const ExtractFramesOptions& options,
    const std::function<void(std::int64_t frame_count)>& check_frame_count = {});

}  // namespace labpose::pipeline
