// Errors of a network on labeled images, as DeepLabCut reports them: per image and bodypart the
// Euclidean distance between label and prediction (called "RMSE" though it is a mean distance);
// means over labeled points, and the same restricted to predictions with likelihood >= pcutoff.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/dataset/dataset.hpp"
#include "pipeline/pose/predict.hpp"

namespace labpose::pipeline {

/// Predictions for dataset.images[indices[k]] (full images under `project`).
std::vector<std::vector<KeypointPrediction>> predict_images(ImagePredictor& predictor,
                                                            const Dataset& dataset,
                                                            const std::vector<std::size_t>& indices,
                                                            const std::filesystem::path& project);

struct ErrorSummary {
  double mean = 0.0;          // NaN when no labeled point
  double mean_pcutoff = 0.0;  // over predictions with likelihood >= pcutoff (NaN when none)
  std::vector<double> per_bodypart, per_bodypart_pcutoff;
  std::size_t points = 0, points_pcutoff = 0;
};

/// predictions[k]: one per slot of dataset.images[indices[k]] (Dataset::slots()). A multi-animal
/// image's errors are per bodypart over every individual; a slot predicted NaN (a labeled animal
/// matched to no predicted one) is left out.
ErrorSummary summarize_errors(const Dataset& dataset, const std::vector<std::size_t>& indices,
                              const std::vector<std::vector<KeypointPrediction>>& predictions,
                              double pcutoff);

/// Percentiles of the distances between the keypoints of two precisions, in pixels.
struct ShiftPercentiles {
  double median = 0.0, p99 = 0.0, largest = 0.0;  // p99: the 99th percentile (nearest rank)
  std::size_t keypoints = 0;
};

/// How far the keypoints of another precision (bf16, int8) are from fp32's on the same images:
/// over every keypoint both placed, and over those fp32 placed with likelihood >= pcutoff (the
/// ones a user keeps: below it the argmax of a flat score map is arbitrary in any precision).
struct KeypointShift {
  ShiftPercentiles all, confident;
  double likelihood_change = 0.0;  // the largest, over every keypoint
};

/// `other` against `reference`, image by image and bodypart by bodypart (the same shapes).
KeypointShift keypoint_shift(const std::vector<std::vector<KeypointPrediction>>& reference,
                             const std::vector<std::vector<KeypointPrediction>>& other,
                             double pcutoff);

/// Test sets smaller than this give a noisy mean error: one frame more or less right moves it a
/// lot.
constexpr std::size_t kFewTestImages = 10;

/// For a test set of `test_images` (1 to kFewTestImages - 1) of the shuffle `shuffle`: a sentence
/// saying its error is noisy and how to get a larger one; "" for 0 or enough images.
std::string small_test_set_note(std::size_t test_images, const std::string& shuffle);

}  // namespace labpose::pipeline
