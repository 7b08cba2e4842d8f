// convert_detections2tracklets without the files: every frame's assembled animals linked into
// tracklets by the ellipse or box tracker, or by identity votes alone. Frames where no animal was
// assembled are skipped, as in DeepLabCut: the trackers neither predict nor age there.
#pragma once

#include <vector>

#include "pipeline/tracking/sort_tracker.hpp"
#include "pipeline/tracking/tracklets.hpp"

namespace labpose::pipeline {

/// The tracklets of a video: frames[i] is frame i. With identity votes, each tracked animal
/// carries its favoured individual, the ellipse tracker counts a same-identity match double, and
/// TrackMethod::identity assigns animals to individuals by the votes (tracklet id = individual).
/// Throws Error when frames disagree (bodypart counts, vote counts) or a setting is out of range.
Tracklets link_tracklets(const std::vector<FrameAnimals>& frames, const TrackerSettings& settings);

}  // namespace labpose::pipeline
