// The identity head's values at candidates, assembled keypoints' individuals, animals' votes.
#include "pipeline/assembly/identity.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"

namespace labpose::pipeline {

std::vector<std::vector<double>> read_identity(const MapStack& logits,
                                               const Candidates& candidates) {
  std::vector<std::vector<double>> identity(candidates.size());
  for (std::size_t j = 0; j < candidates.size(); ++j) {
    for (const Candidate& c : candidates[j]) {
      if (c.row < 0 || c.row >= logits.height || c.col < 0 || c.col >= logits.width) {
        throw Error(
            fmt::format("a candidate of bodypart {} lies at cell ({}, {}), outside the "
                        "identity maps of {} x {} cells",
                        j, c.row, c.col, logits.height, logits.width));
      }
      // Each channel's sigmoid, as DeepLabCut reads them from its score maps (`scmaps`, which
      // hold sigmoids): independent probabilities, one per individual, not summing to 1.
      for (int i = 0; i < logits.channels; ++i) {
        const double logit = logits.at(i, c.row, c.col);
        identity[j].push_back(1.0 / (1.0 + std::exp(-logit)));
      }
    }
  }
  return identity;
}

int favoured_individual(std::span<const double> probabilities) {
  // No votes, or all zero (an animal without identities among animals with them): no individual.
  if (std::none_of(probabilities.begin(), probabilities.end(), [](double p) { return p > 0.0; }))
    return -1;
  return static_cast<int>(std::max_element(probabilities.begin(), probabilities.end()) -
                          probabilities.begin());
}

void attach_identities(Assemblies& assemblies, const ImageDetections& detections) {
  if (detections.identity.empty()) return;
  for (Assembly& animal : assemblies.animals) {
    animal.identity.assign(animal.candidate.size(), -1);
    for (std::size_t j = 0; j < animal.candidate.size(); ++j) {
      const int c = animal.candidate[j];
      const std::size_t n = detections.candidates.at(j).size();
      if (c < 0 || n == 0) continue;
      const std::vector<double>& values = detections.identity.at(j);
      const std::size_t individuals = values.size() / n;
      animal.identity[j] = favoured_individual(
          std::span(values).subspan(static_cast<std::size_t>(c) * individuals, individuals));
    }
  }
}

std::vector<double> identity_votes(const Assembly& animal, int individuals) {
  std::map<int, std::pair<double, int>> by_individual;  // likelihood sum, keypoints
  for (std::size_t j = 0; j < animal.identity.size() && j < animal.keypoints.size(); ++j) {
    const KeypointPrediction& k = animal.keypoints[j];
    const int individual = animal.identity[j];
    if (individual < 0 || std::isnan(k.x) || std::isnan(k.y) || std::isnan(k.likelihood)) continue;
    if (individual >= individuals) {
      throw Error(fmt::format("an animal's keypoint favours individual {}, but there are {} "
                              "individuals",
                              individual, individuals),
                  "the assemblies come from a model trained with other individuals; analyze the "
                  "video again with --overwrite");
    }
    auto& [sum, count] = by_individual[individual];
    sum += k.likelihood;
    ++count;
  }
  if (by_individual.empty()) return {};
  // Softmax of the mean likelihoods, shifted by the largest.
  double largest = -INFINITY;
  for (const auto& [individual, entry] : by_individual)
    largest = std::max(largest, entry.first / entry.second);
  std::vector<double> votes(static_cast<std::size_t>(individuals), 0.0);
  double sum = 0.0;
  for (const auto& [individual, entry] : by_individual) {
    votes[static_cast<std::size_t>(individual)] = std::exp(entry.first / entry.second - largest);
    sum += votes[static_cast<std::size_t>(individual)];
  }
  for (double& vote : votes) vote /= sum;
  return votes;
}

}  // namespace labpose::pipeline
