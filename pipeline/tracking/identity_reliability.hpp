// How far a video's identity votes can be trusted, measured on its own tracklets. A piece of a
// tracklet (its frames without a hole) follows one animal, so votes that tell the individuals apart
// agree with the piece's majority. Linking and stitching weigh the votes by that agreement: not at
// all where they agree no more than chance, as DeepLabCut does where they always agree. A poorly
// trained identity head then no longer pulls the tracker from one animal to another.
#pragma once

#include <cstddef>
#include <optional>

#include "pipeline/tracking/tracklets.hpp"

namespace labpose::pipeline {

struct IdentityReliability {
  double agreement = 0.0;  // share of the voted frames that favour their piece's majority
  double chance = 0.0;     // the agreement of votes at random: 1 / individuals
  double weight = 0.0;     // (agreement - chance) / (1 - chance), within [0, 1]
  std::size_t frames = 0;  // voted frames in pieces of min_length frames or more
};

/// The reliability of the votes in `tracklets` (TrackedAnimal::identity) among `individuals`
/// individuals, over the pieces of min_length frames or more. nullopt when no such piece has a
/// vote, or with fewer than two individuals.
std::optional<IdentityReliability> identity_reliability(const Tracklets& tracklets, int individuals,
                                                        int min_length = 10);

}  // namespace labpose::pipeline
