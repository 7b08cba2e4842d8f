// Post-training calibration of a trained network: the largest magnitude of each value of its fused
// graph over the project's own labeled frames, measured once in fp32 and kept beside the snapshot
// (<snapshot>.int8.json) for every later run. int8 plans quantize with it, and --precision auto
// on a GPU checks fp16's range against it. Not the quantization (the CPU backend's int8 plans) and
// not the choice of frames (the callers pass the training images).
#pragma once

#include <filesystem>
#include <vector>

#include "nets/net.hpp"

namespace labpose::pipeline {

/// Up to this many images are run to calibrate (spread evenly over those given).
constexpr std::size_t kCalibrationImages = 64;

/// The training images of the shuffle whose train/ folder holds `snapshot` (its pose_cfg.yaml's
/// split file), under `project`: the frames a trained network is calibrated on.
std::vector<std::filesystem::path> calibration_images(const std::filesystem::path& snapshot,
                                                      const std::filesystem::path& project);

/// `<snapshot>.int8.json`: where the calibration of a snapshot is kept.
std::filesystem::path int8_calibration_file(const std::filesystem::path& snapshot);

/// The largest magnitude of each value of `net`'s fused graph (`net` loaded from `snapshot`): read
/// from int8_calibration_file() when that file is for this very snapshot (its size and SHA-256)
/// and this network, else measured on `images` (RGB image files; up to kCalibrationImages of
/// them, evenly spread) in fp32 on the CPU and written there atomically, with a progress bar.
/// Says which it did. Throws an Error when `images` is empty or an image cannot be read.
nets::ActivationRanges calibration_ranges(const nets::Net& net,
                                          const std::filesystem::path& snapshot,
                                          const std::vector<std::filesystem::path>& images);

/// Gives `net` its int8 calibration: calibration_ranges() as its activation ranges.
void calibrate_for_int8(nets::Net& net, const std::filesystem::path& snapshot,
                        const std::vector<std::filesystem::path>& images);

}  // namespace labpose::pipeline
