// DeepLabCut's frame-to-frame trackers (deeplabcut/core/trackingutils.py): SORTEllipse, a Kalman
// filter per animal on its covariance ellipse matched by ellipse similarity, and SORTBox, one on
// its keypoint box matched by IoU. Both match by optimal assignment and keep a target `max_age`
// frames unseen. Not the skeleton tracker, and not the stitching of tracklets into tracks
// (stitch.hpp).
#pragma once

#include <vector>

#include "pipeline/tracking/kalman.hpp"
#include "pipeline/tracking/tracklets.hpp"

namespace labpose::pipeline {

enum class TrackMethod {
  ellipse,   // SORTEllipse (DeepLabCut's default, `_el`)
  box,       // SORTBox (`_bx`)
  identity,  // no tracker: each animal goes to the individual its votes favour (identity_only)
};

/// inference_cfg.yaml's tracking keys, with the defaults of DeepLabCut's template.
struct TrackerSettings {
  TrackMethod method = TrackMethod::ellipse;
  int max_age = 100;                // frames a target survives unseen
  int min_hits = 3;                 // consecutive matches before a new target is reported
  double iou_threshold = 0.2;       // weakest similarity (ellipse) or IoU (box) that matches
  double bounding_box_slack = 0.0;  // `boundingboxslack`, pixels around keypoint boxes
  double ellipse_sd = 2.0;          // the ellipse's size in standard deviations
  // Ellipse tracker with identity votes: a match of the same individual counts (1 + this) times,
  // double at 1 as in DeepLabCut's SORTEllipse. track_assemblies sets it from the votes' measured
  // reliability.
  double identity_weight = 1.0;
};

/// Throws Error when a setting is out of range.
void check_tracker_settings(const TrackerSettings& settings);

/// One reported target in a frame: its tracklet id and the animal (index into the frame's animals)
/// it was matched to.
struct TrackHypothesis {
  int tracklet_id = 0;
  int animal = 0;
};

/// SORTEllipse or SORTBox (settings.method), fed one frame after another.
class SortTracker {
 public:
  explicit SortTracker(const TrackerSettings& settings);

  /// Predicts every target, matches the frame's animals to them and returns the targets seen in
  /// this frame that have been matched min_hits times in a row (or all in the first min_hits
  /// frames). identities: empty, or per animal the individual its votes favour; a match of the
  /// same individual counts (1 + identity_weight) times (ellipse tracker only).
  std::vector<TrackHypothesis> track(const std::vector<Assembly>& animals,
                                     const std::vector<int>& identities);

 private:
  struct Target {
    KalmanFilter filter;
    int id = 0;
    int identity = -1;
    int time_since_update = 0;
    int hit_streak = 0;
  };
  struct Detection {
    int animal = 0;
    std::vector<double> measurement;  // ellipse (x, y, width, height, theta) or box (x, y, s, r)
  };

  std::vector<Detection> measure(const std::vector<Assembly>& animals) const;
  Target new_target(const Detection& detection, int identity);
  double similarity(const Detection& detection, const Target& target) const;
  void predict_targets();

  TrackerSettings settings_;
  std::vector<Target> targets_;
  int frames_ = 0;
  int next_id_ = 0;
};

}  // namespace labpose::pipeline
