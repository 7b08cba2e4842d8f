// Training targets of DeepLabCut's bottom-up multi-animal recipe for one augmented crop, on the
// network's output grid (stride 8, cell centres at c * 8 + 4): score maps, location refinement,
// part-affinity fields (PAFs) and identity maps, with their loss weights. Not the augmentation,
// not the losses (the backends', see multi_loss_weights.hpp) and not the network's heads.
//
// The recipe is the TensorFlow engine's (2.2 and later: MAImgaugPoseDataset
// .compute_target_part_scoremap_numpy in pose_estimation_tensorflow/datasets/
// pose_multianimal_imgaug.py), whose pose_cfg keys labpose reads. With R = pos_dist_thresh * scale:
// - score maps: bodypart j is 1 on the cells whose centre is within R of a visible keypoint j of
//   any animal, 0 elsewhere; unique bodyparts likewise, in the channels after the multi-animal
//   ones.
// - location refinement: (keypoint - cell centre) / locref_stdev on those cells, 0 elsewhere. Where
//   the disks of several animals overlap, the animal that comes LAST wins: DeepLabCut writes the
//   animals in order, each overwriting the one before. Neither engine takes the nearest keypoint.
// - PAFs: for edge (s, t) and each animal with both ends visible and apart, on the cells whose
//   centre lies between the perpendiculars through the two ends (inclusive) and within
//   pafwidth / scale pixels of the limb's line: the unit vector s -> t times (1 - distance * scale
//   / pafwidth), a field that fades from 1 on the limb to 0 at the band's edge. Where the limbs of
//   several animals cover a cell, the last animal wins (no averaging). DeepLabCut divides the
//   distance by pafwidth and then MULTIPLIES by scale, so a shrunk crop (scale < 1) gets a wider
//   band in pixels; labpose does the same. (The PyTorch engine's PartAffinityFieldGenerator: same
//   field, half-width pafwidth pixels, no scale.)
// - identity (pose_cfg num_idchannel, one channel per individual when config `identity: true`):
//   channel i is 1 on the union of the disks around individual i's visible keypoints.
// - weights, with DeepLabCut's multi-animal default weigh_only_present_joints: false: 1 on every
//   cell of every map, so location refinement learns 0 away from keypoints and PAFs 0 away from
//   limbs. With weigh_only_present_joints: true, locref weights are 1 on the disks and PAF weights
//   1 on the bands; score weights then (only if weigh_part_predictions, without which DeepLabCut
//   ignores them) are 1 on the whole channel of a bodypart visible in the crop, 0 on the others and
//   on the identity channels (DeepLabCut's weights cover the bodypart channels only).
// Where labpose differs: the caller drops the keypoints outside the crop (DeepLabCut keeps 0 < x <
// width and 0 < y < height after augmentation) by passing NaN; the animals are given in
// individuals order, and animal i is individual i (DeepLabCut's joint dictionary key).
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "pipeline/assembly/graph.hpp"

namespace labpose::pipeline {

/// A keypoint in crop pixels; NaN (or another non-finite value) = not visible.
struct CropPoint {
  double x = std::nan("");
  double y = std::nan("");
};

/// pose_cfg keys and the crop's augmentation scale.
struct MultiTargetSettings {
  int stride = 8;
  double pos_dist_thresh = 17.0;  // pose_cfg `pos_dist_thresh`, pixels before scaling
  double scale = 1.0;             // the crop's augmentation scale (target size / crop_size)
  double locref_stdev = 7.2801;   // pose_cfg `locref_stdev`
  double pafwidth = 20.0;         // pose_cfg `pafwidth` (create_multianimaltraining_dataset: 20)
  bool weigh_only_present_joints = false;  // pose_cfg key; multi-animal projects get false
  bool weigh_part_predictions = false;     // pose_cfg key; default false

  /// The disk's radius in crop pixels: pos_dist_thresh * scale.
  double radius() const { return pos_dist_thresh * scale; }
  /// The PAF band's half-width in crop pixels, as DeepLabCut computes it: pafwidth / scale.
  double paf_half_width() const { return pafwidth / scale; }
};

/// What the heads predict: J = multi_bodyparts + unique_bodyparts score channels, 2J locref
/// channels, 2E PAF channels (E = graph.size()), I = identity_channels identity channels, each a
/// height x width grid.
struct MultiTargetLayout {
  int multi_bodyparts = 0;    // config `multianimalbodyparts`
  int unique_bodyparts = 0;   // config `uniquebodyparts`
  int identity_channels = 0;  // pose_cfg `num_idchannel`: the individuals with identity, else 0
  PafGraph graph;             // pose_cfg `partaffinityfield_graph`, over multi-animal bodyparts
  int height = 0;             // grid rows
  int width = 0;              // grid columns

  int bodyparts() const { return multi_bodyparts + unique_bodyparts; }
  std::size_t plane() const {
    return static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  }
  std::size_t score_values() const { return static_cast<std::size_t>(bodyparts()) * plane(); }
  std::size_t locref_values() const { return 2 * score_values(); }
  std::size_t paf_values() const { return 2 * graph.size() * plane(); }
  std::size_t identity_values() const {
    return static_cast<std::size_t>(identity_channels) * plane();
  }
};

/// The caller's arrays, each channel-major and row-major; every one is overwritten.
struct MultiTargetMaps {
  std::span<float> score;             // (J, H, W): multi-animal bodyparts, then unique ones
  std::span<float> score_weights;     // (J, H, W)
  std::span<float> locref;            // (2J, H, W): dx of bodypart j in 2j, dy in 2j + 1
  std::span<float> locref_weights;    // (2J, H, W)
  std::span<float> pafs;              // (2E, H, W): x of edge e in 2e, y in 2e + 1
  std::span<float> paf_weights;       // (2E, H, W)
  std::span<float> identity;          // (I, H, W); empty when I = 0
  std::span<float> identity_weights;  // (I, H, W); empty when I = 0
};

/// Fills `maps` with one crop's targets. animals: one list of multi_bodyparts keypoints per animal,
/// in individuals order (at most identity_channels of them when identity_channels > 0); unique:
/// unique_bodyparts keypoints, or none when no unique bodypart is visible. DeepLabCut's network
/// puts the identity channels after the J score channels of one head (J + I channels): `identity`
/// may be the tail of the same buffer as `score`. Throws Error naming what disagrees: an animal or
/// `unique` of the wrong size, a graph edge outside the multi-animal bodyparts, a grid, setting or
/// array size that is not positive or not the layout's.
void build_multi_targets(std::span<const std::vector<CropPoint>> animals,
                         std::span<const CropPoint> unique, const MultiTargetLayout& layout,
                         const MultiTargetSettings& settings, const MultiTargetMaps& maps);

}  // namespace labpose::pipeline
