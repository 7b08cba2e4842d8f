// Matching predicted animals to labeled ones by the optimal assignment of mean distances.
#include "pipeline/evaluation/animal_matching.hpp"

#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>

#include "pipeline/assembly/assignment.hpp"
#include "pipeline/pose/predict.hpp"

namespace labpose::pipeline {
namespace {

// The mean distance between labeled individual i and `animal` over the bodyparts both have; NaN
// when they have none in common.
double mean_distance(const Dataset& dataset, const LabeledImage& image, std::size_t i,
                     const Assembly& animal) {
  double sum = 0.0;
  int common = 0;
  for (std::size_t j = 0; j < dataset.multi_bodyparts && j < animal.keypoints.size(); ++j) {
    const std::size_t slot = i * dataset.bodyparts.size() + j;
    const KeypointPrediction& p = animal.keypoints[j];
    if (std::isnan(image.x[slot]) || std::isnan(p.x)) continue;
    sum += std::hypot(p.x - image.x[slot], p.y - image.y[slot]);
    ++common;
  }
  return common > 0 ? sum / common : std::nan("");
}

}  // namespace

std::vector<int> match_animals(const Dataset& dataset, const LabeledImage& image,
                               const std::vector<Assembly>& animals) {
  const std::size_t labeled = dataset.animals();
  std::vector<double> distances(labeled * animals.size());
  double largest = 0.0;
  for (std::size_t i = 0; i < labeled; ++i) {
    for (std::size_t a = 0; a < animals.size(); ++a) {
      distances[i * animals.size() + a] = mean_distance(dataset, image, i, animals[a]);
      if (std::isfinite(distances[i * animals.size() + a]))
        largest = std::max(largest, distances[i * animals.size() + a]);
    }
  }
  // Maximizing (largest + 1 - distance) over as many pairs as can be made minimizes the total
  // distance; pairs without a bodypart in common weigh 0 and are never kept.
  std::vector<double> weights(distances.size(), 0.0);
  for (std::size_t k = 0; k < distances.size(); ++k) {
    if (std::isfinite(distances[k])) weights[k] = largest + 1.0 - distances[k];
  }
  std::vector<int> match(labeled, -1);
  for (const auto& [row, col] : max_weight_assignment(weights, static_cast<int>(labeled),
                                                      static_cast<int>(animals.size()))) {
    if (weights[static_cast<std::size_t>(row) * animals.size() + static_cast<std::size_t>(col)] > 0)
      match[static_cast<std::size_t>(row)] = col;
  }
  return match;
}

std::vector<KeypointPrediction> matched_slots(const Dataset& dataset, const LabeledImage& image,
                                              const Assemblies& predicted) {
  const std::size_t bodyparts = dataset.bodyparts.size();
  std::vector<KeypointPrediction> slots(dataset.slots());
  const std::vector<int> match = match_animals(dataset, image, predicted.animals);
  for (std::size_t i = 0; i < match.size(); ++i) {
    if (match[i] < 0) continue;
    const Assembly& animal = predicted.animals[static_cast<std::size_t>(match[i])];
    for (std::size_t j = 0; j < dataset.multi_bodyparts && j < animal.keypoints.size(); ++j)
      slots[i * bodyparts + j] = animal.keypoints[j];
  }
  if (predicted.single && dataset.multi_bodyparts < bodyparts) {
    const std::size_t first =
        (dataset.individuals.size() - 1) * bodyparts + dataset.multi_bodyparts;
    for (std::size_t u = 0; u < predicted.single->keypoints.size(); ++u)
      slots[first + u] = predicted.single->keypoints[u];
  }
  return slots;
}

std::vector<std::vector<KeypointPrediction>> predict_animal_slots(
    AnimalPredictor& predictor, const Dataset& dataset, const std::vector<std::size_t>& indices,
    const std::filesystem::path& project) {
  std::vector<std::vector<KeypointPrediction>> predictions;
  predictions.reserve(indices.size());
  for (const std::size_t index : indices) {
    const LabeledImage& image = dataset.images[index];
    const Assemblies animals = predictor.predict(load_rgb_image(project / image.path));
    predictions.push_back(matched_slots(dataset, image, animals));
  }
  return predictions;
}

}  // namespace labpose::pipeline
