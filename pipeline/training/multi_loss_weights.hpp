// How DeepLabCut's multi-animal TensorFlow recipe weighs its heads' losses, as named values for the
// backends' losses (which are not here): BasePoseNet.train in pose_estimation_tensorflow/nnets/
// base.py, with the pose_cfg that create_multianimaltraining_dataset writes (its items2change
// over the template deeplabcut/pose_cfg.yaml). Not the targets (multi_targets.hpp).
//
// Total loss = score + locref + paf, each term a TF1 loss with its default reduction
// SUM_BY_NONZERO_WEIGHTS (the weighted sum divided by the number of non-zero weights; with the
// default all-ones weights, the mean over every value of the batch):
// - score: sigmoid cross-entropy on the J + I channels of part_pred (bodyparts, then identity),
//   weight 1, score weights used only when weigh_part_predictions;
// - locref: locref_loss_weight x Huber (delta 1, locref_huber_loss: true) against the locref
//   weights;
// - paf: pairwise_loss_weight x mean squared error (pairwise_huber_loss: false) against the PAF
//   weights, when partaffinityfield_predict (true whenever the graph has an edge).
#pragma once

namespace labpose::pipeline {

/// The score-map (and identity) cross-entropy's factor: DeepLabCut has no key for it.
inline constexpr double kMultiScoreLossWeight = 1.0;
/// pose_cfg `locref_loss_weight` in the template deeplabcut/pose_cfg.yaml (the hidden default is
/// 1).
inline constexpr double kMultiLocrefLossWeight = 0.05;
/// pose_cfg `pairwise_loss_weight`, set to 0.1 by create_multianimaltraining_dataset.
inline constexpr double kMultiPafLossWeight = 0.1;
/// pose_cfg `pafwidth`, set to 20 (pixels) by create_multianimaltraining_dataset.
inline constexpr double kMultiPafWidth = 20.0;

/// The factors and loss kinds of one multi-animal model, read from its pose_cfg.
struct MultiLossWeights {
  double score = kMultiScoreLossWeight;
  double locref = kMultiLocrefLossWeight;  // pose_cfg `locref_loss_weight`
  double paf = kMultiPafLossWeight;        // pose_cfg `pairwise_loss_weight`
  bool locref_huber = true;                // pose_cfg `locref_huber_loss`; false: squared error
  bool paf_huber = false;                  // pose_cfg `pairwise_huber_loss`; false: squared error
};

}  // namespace labpose::pipeline
