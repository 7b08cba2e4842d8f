// Training-time augmentation on the CPU (OpenCV): one affine warp per sample — scale jitter,
// rotation, horizontal flip with left/right bodyparts swapped, and a translation that puts a
// random neighbourhood of the labeled animal into a fixed-size crop — then brightness, contrast,
// blur and noise. Keypoints follow the same warp; those leaving the crop become not visible.
// Deterministic for a given random source.
#pragma once

#include <cstdint>
#include <vector>

#include "nets/random.hpp"
#include "pipeline/training/pose_config.hpp"

namespace cv {
class Mat;
}

namespace labpose::pipeline {

struct AugmentedSample {
  std::vector<std::uint8_t> pixels;  // crop_height x crop_width x 3, RGB interleaved
  std::vector<double> x, y;          // J keypoints in crop pixels (NaN = not visible)
  double scale = 1.0;                // the image's magnification (target radius scales with it)
};

/// Swap table for flips: for each keypoint slot the index of its mirror image (itself when none):
/// a bodypart's, or in a multi-animal model each individual's bodypart's within that individual.
std::vector<int> flip_partners(const PoseConfig& config);

/// The keypoint slots the crop is centred on: [first, first + count); all by default.
struct CentreSlots {
  std::size_t first = 0;
  std::size_t count = static_cast<std::size_t>(-1);
};

/// Augments one labeled image (8-bit RGB). `partners` from flip_partners(); the crop is centred
/// on the visible keypoints of `centre` (the image's centre when none is visible).
AugmentedSample augment(const cv::Mat& rgb, const std::vector<double>& x,
                        const std::vector<double>& y, const PoseConfig& config,
                        const std::vector<int>& partners, nets::Random& random,
                        const CentreSlots& centre = {});

}  // namespace labpose::pipeline
