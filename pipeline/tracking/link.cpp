// The frame loop of convert_detections2tracklets, and the checks that the frames agree.
#include "pipeline/tracking/link.hpp"

#include <algorithm>
#include <cstddef>
#include <string>

#include "core/error.hpp"
#include "pipeline/assembly/assignment.hpp"
#include "pipeline/assembly/identity.hpp"

namespace labpose::pipeline {
namespace {

const char* const kAssemblyHint =
    "tracking takes the assemblies of one model on one video; re-run the analysis of this video "
    "so that every frame comes from the same model";

struct Shape {
  std::size_t bodyparts = 0;    // multi-animal bodyparts per animal, 0 = not seen yet
  std::size_t individuals = 0;  // identity votes per animal, 0 = not seen yet
  int bodyparts_frame = -1;
  int individuals_frame = -1;
};

void check_frame(const FrameAnimals& frame, int index, Shape& shape) {
  const std::string where = "tracking: frame " + std::to_string(index) + ": ";
  const auto& animals = frame.assemblies.animals;
  for (std::size_t a = 0; a < animals.size(); ++a) {
    const auto size = animals[a].keypoints.size();
    if (shape.bodyparts_frame < 0) {
      shape.bodyparts = size;
      shape.bodyparts_frame = index;
    } else if (size != shape.bodyparts) {
      throw Error(where + "animal " + std::to_string(a) + " has " + std::to_string(size) +
                      " bodyparts, but animals in frame " + std::to_string(shape.bodyparts_frame) +
                      " have " + std::to_string(shape.bodyparts),
                  kAssemblyHint);
    }
  }
  const auto& votes = frame.identity_votes;
  if (votes.empty()) return;
  if (votes.size() != animals.size())
    throw Error(where + "identity votes for " + std::to_string(votes.size()) + " animals, but " +
                    std::to_string(animals.size()) + " animals were assembled",
                "give one vector of identity probabilities per assembled animal, or none");
  for (std::size_t a = 0; a < votes.size(); ++a) {
    if (shape.individuals_frame < 0) {
      shape.individuals = votes[a].size();
      shape.individuals_frame = index;
    }
    if (votes[a].empty() || votes[a].size() != shape.individuals)
      throw Error(where + "animal " + std::to_string(a) + " has " +
                      std::to_string(votes[a].size()) + " identity votes, but frame " +
                      std::to_string(shape.individuals_frame) + " has " +
                      std::to_string(shape.individuals) + " (one per individual)",
                  "identity votes come from the identity head of a model trained with "
                  "identity: true; use one model for the whole video");
  }
}

// identity_only: the optimal assignment of animals to individuals by their votes.
std::vector<TrackHypothesis> assign_identities(const FrameAnimals& frame, int index) {
  const auto& votes = frame.identity_votes;
  if (votes.empty() && !frame.assemblies.animals.empty())
    throw Error("tracking: frame " + std::to_string(index) +
                    ": linking by identity needs identity votes for every animal",
                "use the ellipse or box tracker for a model trained without identity: true");
  if (votes.empty()) return {};
  const auto individuals = votes.front().size();
  std::vector<double> weights;
  for (const auto& animal_votes : votes)
    weights.insert(weights.end(), animal_votes.begin(), animal_votes.end());
  std::vector<TrackHypothesis> hypotheses;
  for (const auto& [animal, individual] : max_weight_assignment(
           weights, static_cast<int>(votes.size()), static_cast<int>(individuals)))
    hypotheses.push_back({individual, animal});
  return hypotheses;
}

}  // namespace

Tracklets link_tracklets(const std::vector<FrameAnimals>& frames, const TrackerSettings& settings) {
  check_tracker_settings(settings);
  Shape shape;
  for (std::size_t i = 0; i < frames.size(); ++i)
    check_frame(frames[i], static_cast<int>(i), shape);
  std::optional<SortTracker> tracker;
  if (settings.method != TrackMethod::identity) tracker.emplace(settings);
  Tracklets tracklets;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& frame = frames[i];
    const int index = static_cast<int>(i);
    if (frame.assemblies.single)
      tracklets.single[index] = TrackedAnimal{frame.assemblies.single->keypoints, -1};
    const auto& animals = frame.assemblies.animals;
    if (animals.empty()) continue;
    std::vector<int> identities;
    for (const auto& votes : frame.identity_votes) identities.push_back(favoured_individual(votes));
    const auto hypotheses =
        tracker ? tracker->track(animals, identities) : assign_identities(frame, index);
    for (const auto& hypothesis : hypotheses) {
      const auto animal = static_cast<std::size_t>(hypothesis.animal);
      tracklets.by_id[hypothesis.tracklet_id][index] =
          TrackedAnimal{animals[animal].keypoints, identities.empty() ? -1 : identities[animal]};
    }
  }
  return tracklets;
}

}  // namespace labpose::pipeline
