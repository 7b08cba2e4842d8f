// OKS, DeepLabCut's greedy animal matching, and mAP/mAR over OKS thresholds.
#include "pipeline/evaluation/keypoint_similarity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace labpose::pipeline {
namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon();  // numpy's spacing(1)

// The OKS of each match, in DeepLabCut's order; adds the labeled animals left over to `misses`.
std::vector<double> match_image(const ImageAnimals& image, double sigma, std::size_t& misses) {
  std::vector<std::size_t> order(image.predicted.size());
  std::iota(order.begin(), order.end(), 0);
  // numpy's argsort (quicksort, not stable) reversed; equal affinities may come in another order.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return image.predicted[a].affinity() > image.predicted[b].affinity();
  });
  std::vector<std::size_t> left(image.labeled.size());
  std::iota(left.begin(), left.end(), 0);
  std::vector<double> similarities;
  for (const std::size_t p : order) {
    if (left.empty()) break;
    std::size_t best = 0;
    double best_oks = -1.0;
    for (std::size_t k = 0; k < left.size(); ++k) {
      const double oks =
          object_keypoint_similarity(image.predicted[p].keypoints, image.labeled[left[k]], sigma);
      if (std::isnan(oks)) {  // numpy's argmax stops at the first NaN
        best = k;
        best_oks = oks;
        break;
      }
      if (oks > best_oks) {
        best = k;
        best_oks = oks;
      }
    }
    similarities.push_back(best_oks);
    left.erase(left.begin() + static_cast<std::ptrdiff_t>(best));
  }
  misses += left.size();
  return similarities;
}

}  // namespace

double object_keypoint_similarity(const std::vector<KeypointPrediction>& predicted,
                                  const std::vector<KeypointPrediction>& labeled, double sigma) {
  double low_x = 0, high_x = 0, low_y = 0, high_y = 0, sum = 0;
  int both = 0;
  std::vector<std::size_t> common;
  for (std::size_t j = 0; j < predicted.size() && j < labeled.size(); ++j) {
    if (!present(predicted[j]) || !present(labeled[j])) continue;
    const KeypointPrediction& t = labeled[j];
    if (common.empty()) {
      low_x = high_x = t.x;
      low_y = high_y = t.y;
    }
    low_x = std::min(low_x, t.x);
    high_x = std::max(high_x, t.x);
    low_y = std::min(low_y, t.y);
    high_y = std::max(high_y, t.y);
    common.push_back(j);
  }
  if (common.size() < 2) return std::nan("");
  // The box of the labeled keypoints the two have in common, as DeepLabCut takes it.
  const double scale_squared = (high_x - low_x + kEpsilon) * (high_y - low_y + kEpsilon);
  const double k_squared = (2 * sigma) * (2 * sigma);
  for (const std::size_t j : common) {
    const double dx = predicted[j].x - labeled[j].x, dy = predicted[j].y - labeled[j].y;
    sum += std::exp(-(dx * dx + dy * dy) / (2 * scale_squared * k_squared));
    ++both;
  }
  return sum / both;
}

AssemblyScores score_assemblies(const std::vector<ImageAnimals>& images, double sigma) {
  AssemblyScores scores;
  std::vector<double> similarities;
  for (const ImageAnimals& image : images) {
    if (image.labeled.empty()) continue;  // DeepLabCut skips images without labeled animals
    const std::vector<double> matched = match_image(image, sigma, scores.misses);
    similarities.insert(similarities.end(), matched.begin(), matched.end());
  }
  scores.matches = similarities.size();
  const auto total = static_cast<double>(scores.matches + scores.misses);
  if (total == 0) {
    scores.mean_average_precision = scores.mean_average_recall = std::nan("");
    return scores;
  }
  double precision_sum = 0.0, recall_sum = 0.0;
  constexpr int kThresholds = 10, kRecallPoints = 101;
  for (int t = 0; t < kThresholds; ++t) {
    const double threshold = 0.5 + t * ((0.95 - 0.5) / 9);  // numpy's linspace(0.5, 0.95, 10)
    std::vector<double> recall, precision;
    double true_positives = 0, false_positives = 0;
    for (const double oks : similarities) {
      (oks >= threshold ? true_positives : false_positives) += 1;
      recall.push_back(true_positives / total);
      precision.push_back(true_positives / (false_positives + true_positives + kEpsilon));
    }
    std::sort(precision.begin(), precision.end(), std::greater<>());
    for (int r = 0; r < kRecallPoints; ++r) {
      // numpy's searchsorted (left) of recall point r / 100 in the non-decreasing recalls
      const double point = r * (1.0 / 100);  // numpy's linspace(0, 1, 101)
      const auto at = static_cast<std::size_t>(
          std::lower_bound(recall.begin(), recall.end(), point) - recall.begin());
      if (at < precision.size()) precision_sum += precision[at];
    }
    recall_sum += recall.empty() ? 0.0 : recall.back();
  }
  scores.mean_average_precision = precision_sum / (kThresholds * kRecallPoints);
  scores.mean_average_recall = recall_sum / kThresholds;
  return scores;
}

}  // namespace labpose::pipeline
