// The data of tracking: what goes in per frame (assembled animals, optional identity votes) and
// what comes out (tracklets, then stitched tracks), as DeepLabCut's `_el.pickle` and `_el.h5` hold
// them. Plain values only; the trackers are in sort_tracker.hpp, the stitching in stitch.hpp.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "pipeline/assembly/assemble.hpp"
#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

/// One frame's input: the animals assemble() found, and, for a project with `identity: true`,
/// each animal's identity votes (one probability per individual, as the identity head gives them).
struct FrameAnimals {
  Assemblies assemblies;
  std::vector<std::vector<double>> identity_votes;  // empty, or one per animal in assemblies
};

/// One animal in one frame of a tracklet: its keypoints (x, y, likelihood; NaN where missing) and
/// the individual its votes favour (-1 without votes).
struct TrackedAnimal {
  std::vector<KeypointPrediction> keypoints;
  int identity = -1;
};

/// Frame index -> the animal in that frame; frames where it was not seen are absent.
using Tracklet = std::map<int, TrackedAnimal>;

/// DeepLabCut's `_el.pickle` content: tracklet id -> frames -> keypoints, and the unique bodyparts
/// (`single`) per frame.
struct Tracklets {
  std::map<int, Tracklet> by_id;
  Tracklet single;
};

/// Stitched tracks: `tracks` has n_tracks entries (an entry may be empty when fewer animals were
/// ever seen); `left_over` holds the pieces that fit no track; `single` is passed through.
struct Tracks {
  std::vector<Tracklet> tracks;
  std::vector<Tracklet> left_over;
  Tracklet single;
};

}  // namespace labpose::pipeline
