// Whether int8 keeps a model's keypoints where fp32 puts them, on the project's own frames: the
// accuracy guard of --precision auto on the CPU. Two sets of frames are predicted in fp32 and in
// int8 on the CPU, and the keypoints fp32 places with likelihood >= pcutoff are compared
// (evaluation/errors.hpp's keypoint shift): the shuffle's labeled frames (training and test, up to
// kInt8CheckImages, evenly spread), and frames of the project's videos (config.yaml's video_sets
// found on this machine, else those in its videos/ folder; up to kInt8CheckVideoFrames, evenly
// spread over them): the frames analysis reads, which the network never trained on and on which
// int8 moves keypoints further. Both sets must hold the bounds. Measured once per snapshot and
// kept beside it as <snapshot>.int8-check.json, with the snapshot's size and SHA-256 and the
// videos read, so a file from another snapshot or set of videos is measured again, never trusted.
// Not the speed side of the choice (devices/precision_speed.hpp) and not int8's calibration
// (pose/int8_calibration.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/analysis/model_choice.hpp"
#include "pipeline/evaluation/errors.hpp"

namespace labpose::pipeline {

/// The most int8 may move the confident keypoints from fp32's, in pixels, for --precision auto to
/// take it: at the median and at the 99th percentile, over the checked frames.
constexpr double kInt8MedianShiftBound = 0.5;
constexpr double kInt8P99ShiftBound = 3.0;
/// Up to this many labeled frames are checked, and up to this many frames of the project's videos.
constexpr std::size_t kInt8CheckImages = 64;
constexpr std::size_t kInt8CheckVideoFrames = 64;

/// A video the check read frames of: its file name and size, which say whether a kept check
/// still describes the project's videos.
struct CheckedVideo {
  std::string file;
  std::uintmax_t bytes = 0;
  bool operator==(const CheckedVideo&) const = default;
};

/// int8 against fp32 on a model's labeled frames and on frames of its project's videos.
struct Int8Check {
  KeypointShift shift;  // on the labeled frames
  std::size_t images = 0;
  KeypointShift video_shift;  // on the videos' frames
  std::size_t video_frames = 0;
  std::vector<CheckedVideo> videos;
  double pcutoff = 0.6;
  /// Some keypoint of the labeled frames was confident in fp32, and the confident ones moved
  /// within both bounds, on the labeled frames and on the videos' frames (where the videos had
  /// confident keypoints).
  bool passed() const;
  /// "moved 0.21 px (median) and 1.30 px (99th percentile) over the 212 keypoints ... on 48
  /// labeled frames, and 0.30 px and 1.90 px over the 250 on 64 frames of the project's video".
  std::string text() const;
};

/// `<snapshot>.int8-check.json`: where a snapshot's check is kept.
std::filesystem::path int8_check_file(const std::filesystem::path& snapshot);

/// The shuffle's labeled frames (its split's training and test images) under model.project.
std::vector<std::filesystem::path> int8_check_images(const AnalysisModel& model);

/// The project's videos under model.project that exist on this machine: config.yaml's video_sets,
/// each as projects::resolve_video finds it, or where none is found, the videos in the project's
/// videos/ folder. Empty for an exported model.
std::vector<std::filesystem::path> int8_check_videos(const AnalysisModel& model);

/// The check of `model`: read from int8_check_file() when it was measured for this very snapshot
/// at model.pcutoff and on these videos (any videos, when none is found here), else measured on
/// `images` and frames of `videos` (int8_check_images(model) and int8_check_videos(model) when
/// not given; frames cropped as config.yaml says; int8 calibrated first where needed; with
/// progress bars) and written there atomically. Says which it did. A video that cannot be read is
/// left out with a warning. Throws an Error when there are no labeled frames to check on (an
/// exported model without its check file, a project without labels) or one cannot be read.
Int8Check int8_check(const AnalysisModel& model);
Int8Check int8_check(const AnalysisModel& model, const std::vector<std::filesystem::path>& images,
                     const std::vector<std::filesystem::path>& videos);

}  // namespace labpose::pipeline
