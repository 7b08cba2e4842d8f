// The pieces shorter than min_length (DeepLabCut's residuals): chained among themselves before
// stitching (_prestitch_residuals) and put back into the stitched tracks after (_finalize_tracks).
#pragma once

#include <vector>

#include "pipeline/tracking/piece.hpp"

namespace labpose::pipeline {

/// Chains residuals that follow one another within `max_gap` frames: per group of such residuals,
/// the chain of largest total (1 - box IoU) becomes one residual; the others stay as they are.
std::vector<Piece> prestitch_residuals(std::vector<Piece> residuals, int max_gap = 5);

/// Adds residuals (of 2 frames or more, longest first) to the tracks: first those that fit one
/// track only (sharing no frame with it), repeatedly; then each of the rest into the track with a
/// hole around it whose centroids lie closest. Returns the residuals that fit nowhere.
std::vector<Piece> add_back_residuals(std::vector<Piece>& tracks, std::vector<Piece> residuals);

}  // namespace labpose::pipeline
