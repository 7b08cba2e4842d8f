// A tracklet as the stitcher sees it (DeepLabCut's stitch.Tracklet): frames in increasing order,
// the animal in each, its likelihood-weighted centroid, and the measures the stitching costs use.
// Internal to pipeline/tracking; not a public data type (tracklets.hpp has those).
#pragma once

#include <array>
#include <vector>

#include "pipeline/tracking/tracklets.hpp"

namespace labpose::pipeline {

struct Piece {
  std::vector<int> frames;                      // strictly increasing
  std::vector<TrackedAnimal> animals;           // per frame
  std::vector<std::array<double, 2>> centroid;  // per frame: likelihood-weighted keypoint mean

  int start() const { return frames.front(); }
  int end() const { return frames.back(); }
  std::size_t size() const { return frames.size(); }
};

/// A piece of the frames in `tracklet` where at least one keypoint has finite x and y.
Piece piece_of(const Tracklet& tracklet);
/// The piece split wherever a frame is missing.
std::vector<Piece> split_at_gaps(const Piece& piece);
/// The two pieces' frames together; `b` must share no frame with `a`.
Piece join(const Piece& a, const Piece& b);
/// Back to frame -> animal.
Tracklet tracklet_of(const Piece& piece);

/// Whether the two pieces share a frame.
bool overlap(const Piece& a, const Piece& b);
/// DeepLabCut's time_gap_to: 0 when they share a frame, else the frames from one's end to the
/// other's start (negative when one lies inside a hole of the other).
int time_gap(const Piece& a, const Piece& b);
/// DeepLabCut's distance_to: the mean centroid distance over shared frames, or the distance
/// between the end of the earlier and the start of the later piece.
double centroid_distance(const Piece& a, const Piece& b);
/// DeepLabCut's box_overlap_with: IoU of the keypoint boxes facing each other; 0 when they share a
/// frame.
double box_overlap(const Piece& a, const Piece& b);
/// The individual most of its frames favour (ties: the lowest), -1 without identity votes.
int piece_identity(const Piece& piece);

}  // namespace labpose::pipeline
