// The identity head's votes, DeepLabCut's way (a network trained with config.yaml's
// `identity: true`): its sigmoids of the individuals at each candidate's cell (the `identity` of
// _full.pickle), the individual each assembled keypoint favours (the 4th column of
// _assemblies.pickle, DeepLabCut's `group`), and an animal's votes (DeepLabCut's
// Assembly.soft_identity). Not the trackers that use the votes (pipeline/tracking).
#pragma once

#include <span>
#include <vector>

#include "pipeline/assembly/assemble.hpp"
#include "pipeline/assembly/maps.hpp"

namespace labpose::pipeline {

/// DeepLabCut's `identity` of one image: per bodypart, its candidates' sigmoid of each of the
/// individuals, row-major (candidates, I). logits: the identity channels (I, H, W) before any
/// activation, on the grid the candidates were found on. Throws Error when a candidate lies
/// outside the grid.
std::vector<std::vector<double>> read_identity(const MapStack& logits,
                                               const Candidates& candidates);

/// The individual `probabilities` favour: the first largest, as numpy's argmax; -1 when there are
/// none or all are 0 (an animal without identities).
int favoured_individual(std::span<const double> probabilities);

/// Sets each animal's Assembly::identity from the candidates it was assembled from: the
/// individual favoured at each keypoint (-1 where it has none). Leaves them empty when
/// `detections` carry no identity.
void attach_identities(Assemblies& assemblies, const ImageDetections& detections);

/// DeepLabCut's Assembly.soft_identity as votes over `individuals`: for each individual favoured
/// by some present keypoint, the mean likelihood of those keypoints; a softmax over these means;
/// 0 for the individuals no keypoint favours. Empty when no keypoint has an identity. Throws
/// Error when a keypoint favours an individual outside 0 .. individuals - 1.
std::vector<double> identity_votes(const Assembly& animal, int individuals);

}  // namespace labpose::pipeline
