// Whether int8 keeps a model's keypoints where fp32 puts them, on the project's own labeled frames:
// the accuracy guard of --precision auto on the CPU. The shuffle's labeled frames (training and
// test, up to kInt8CheckImages, evenly spread) are predicted in fp32 and in int8 on the CPU, and
// the keypoints fp32 places with likelihood >= pcutoff are compared (evaluation/errors.hpp's
// keypoint shift). Measured once per snapshot and kept beside it as <snapshot>.int8-check.json,
// with the snapshot's size and SHA-256, so a file from another snapshot is measured again, never
// trusted. Not the speed side of the choice (devices/precision_speed.hpp) and not int8's
// calibration (pose/int8_calibration.hpp).
#pragma once

#include <cstddef>
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
/// Up to this many labeled frames are checked.
constexpr std::size_t kInt8CheckImages = 64;

/// int8 against fp32 on a model's labeled frames.
struct Int8Check {
  KeypointShift shift;
  std::size_t images = 0;
  double pcutoff = 0.6;
  /// Some keypoint was confident in fp32, and the confident ones moved within both bounds.
  bool passed() const;
  /// "moved 0.21 px (median) and 1.30 px (99th percentile) over the 212 keypoints ... of 48
  /// labeled frames".
  std::string text() const;
};

/// `<snapshot>.int8-check.json`: where a snapshot's check is kept.
std::filesystem::path int8_check_file(const std::filesystem::path& snapshot);

/// The shuffle's labeled frames (its split's training and test images) under model.project.
std::vector<std::filesystem::path> int8_check_images(const AnalysisModel& model);

/// The check of `model`: read from int8_check_file() when it was measured for this very snapshot
/// at model.pcutoff, else measured on `images` (int8_check_images(model) when not given; int8
/// calibrated first where needed; with progress bars) and written there atomically. Says which it
/// did. Throws an Error when there are no labeled frames to check on (an exported model without
/// its check file, a project without labels) or one cannot be read.
Int8Check int8_check(const AnalysisModel& model);
Int8Check int8_check(const AnalysisModel& model, const std::vector<std::filesystem::path>& images);

}  // namespace labpose::pipeline
