// stitch_tracklets without the files (deeplabcut/refine_training_dataset/stitch.py,
// TrackletStitcher): tracklets cut at their holes, the short ones set aside, the rest joined into
// n_tracks tracks by a global min-cost flow whose link cost is the centroid distance across the
// gap (a hundredth of it between tracklets of the same identity, when the votes are reliable), then
// the short ones put back.
#pragma once

#include "pipeline/tracking/tracklets.hpp"

namespace labpose::pipeline {

/// stitch_tracklets' arguments, with DeepLabCut's defaults (weight_func none).
struct StitchSettings {
  int n_tracks = 1;                 // tracks to make: the number of individuals
  int min_length = 10;              // shorter pieces are residuals, put back after stitching
  bool split_tracklets = true;      // cut tracklets where a frame is missing
  bool prestitch_residuals = true;  // chain residuals within 5 frames before putting them back
  int max_gap = 0;  // longest gap a link may bridge; 0 = 1.5 x the largest gap to a next piece
  bool use_identity = true;  // with identity votes in the tracklets, weigh links by identity
  // A link between pieces that favour the same individual costs 0.01^identity_weight of their
  // distance. DeepLabCut's is 1 (a hundredth); the analysis sets it from the votes' reliability.
  double identity_weight = 1.0;
};

/// Throws Error naming the first setting out of range (n_tracks < 1, min_length < 3, max_gap < 0,
/// identity_weight outside [0, 1]).
void check_stitch_settings(const StitchSettings& settings);

/// The tracks of a video. An empty video (no tracklet) gives n_tracks empty tracks. Throws Error
/// when a setting is out of range or no tracklet reaches min_length frames.
Tracks stitch_tracklets(const Tracklets& tracklets, const StitchSettings& settings);

}  // namespace labpose::pipeline
