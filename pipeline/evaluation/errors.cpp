// Prediction on labeled images and DeepLabCut's error summary.
#include "pipeline/evaluation/errors.hpp"

#include <fmt/core.h>

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>

namespace labpose::pipeline {

std::vector<std::vector<KeypointPrediction>> predict_images(ImagePredictor& predictor,
                                                            const Dataset& dataset,
                                                            const std::vector<std::size_t>& indices,
                                                            const std::filesystem::path& project) {
  std::vector<std::vector<KeypointPrediction>> predictions;
  predictions.reserve(indices.size());
  for (std::size_t index : indices)
    predictions.push_back(predictor.predict(load_rgb_image(project / dataset.images[index].path)));
  return predictions;
}

ErrorSummary summarize_errors(const Dataset& dataset, const std::vector<std::size_t>& indices,
                              const std::vector<std::vector<KeypointPrediction>>& predictions,
                              double pcutoff) {
  const std::size_t joints = dataset.bodyparts.size();
  std::vector<double> sum(joints, 0.0), sum_cut(joints, 0.0);
  std::vector<std::size_t> count(joints, 0), count_cut(joints, 0);
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const LabeledImage& image = dataset.images[indices[k]];
    for (std::size_t slot = 0; slot < dataset.slots(); ++slot) {
      if (std::isnan(image.x[slot]) || std::isnan(image.y[slot])) continue;
      const KeypointPrediction& p = predictions[k][slot];
      // A labeled animal that no predicted animal was matched to has no keypoint to measure.
      if (std::isnan(p.x) || std::isnan(p.y)) continue;
      const std::size_t j = slot % joints;
      const double distance = std::hypot(p.x - image.x[slot], p.y - image.y[slot]);
      sum[j] += distance;
      ++count[j];
      if (p.likelihood >= pcutoff) {
        sum_cut[j] += distance;
        ++count_cut[j];
      }
    }
  }
  ErrorSummary summary;
  double total = 0.0, total_cut = 0.0;
  for (std::size_t j = 0; j < joints; ++j) {
    summary.per_bodypart.push_back(count[j] ? sum[j] / static_cast<double>(count[j])
                                            : std::nan(""));
    summary.per_bodypart_pcutoff.push_back(
        count_cut[j] ? sum_cut[j] / static_cast<double>(count_cut[j]) : std::nan(""));
    total += sum[j];
    total_cut += sum_cut[j];
    summary.points += count[j];
    summary.points_pcutoff += count_cut[j];
  }
  summary.mean = summary.points ? total / static_cast<double>(summary.points) : std::nan("");
  summary.mean_pcutoff = summary.points_pcutoff
                             ? total_cut / static_cast<double>(summary.points_pcutoff)
                             : std::nan("");
  return summary;
}

namespace {

ShiftPercentiles percentiles(std::vector<double> distances) {
  ShiftPercentiles result;
  if (distances.empty()) return result;
  std::sort(distances.begin(), distances.end());
  const std::size_t n = distances.size();
  result.keypoints = n;
  result.median = distances[(n - 1) / 2];
  result.p99 = distances[(99 * n + 99) / 100 - 1];  // the ceil(0.99 n)-th smallest
  result.largest = distances.back();
  return result;
}

}  // namespace

KeypointShift keypoint_shift(const std::vector<std::vector<KeypointPrediction>>& reference,
                             const std::vector<std::vector<KeypointPrediction>>& other,
                             double pcutoff) {
  std::vector<double> all, confident;
  KeypointShift shift;
  for (std::size_t image = 0; image < reference.size(); ++image) {
    for (std::size_t j = 0; j < reference[image].size(); ++j) {
      const KeypointPrediction& a = reference[image][j];
      const KeypointPrediction& b = other.at(image).at(j);
      shift.likelihood_change =
          std::max(shift.likelihood_change, std::abs(a.likelihood - b.likelihood));
      const double distance = std::hypot(a.x - b.x, a.y - b.y);
      if (std::isnan(distance)) continue;
      all.push_back(distance);
      if (a.likelihood >= pcutoff) confident.push_back(distance);
    }
  }
  shift.all = percentiles(std::move(all));
  shift.confident = percentiles(std::move(confident));
  return shift;
}

std::string small_test_set_note(std::size_t test_images, const std::string& shuffle) {
  if (test_images == 0 || test_images >= kFewTestImages) return {};
  return fmt::format(
      "the test set of {} has only {} image{}: its error is noisy and small differences between "
      "snapshots mean little (a lower TrainingFraction in config.yaml, in a new shuffle, tests "
      "more "
      "images)",
      shuffle, test_images, test_images == 1 ? "" : "s");
}

}  // namespace labpose::pipeline
