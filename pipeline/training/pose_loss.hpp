// DeepLabCut's single-animal training loss: sigmoid cross-entropy on the score maps (mean over
// every cell; a missing keypoint gives negatives only) plus locref_loss_weight x Huber on the
// location-refinement maps (mean over the cells with weight, the disks around visible keypoints).
// Owns the device targets, weights and output gradients, allocated once for the batch's shapes;
// the targets go up with the batch's images in one upload.
// Not the targets' construction (targets.hpp) and not the network's backward pass.
#pragma once

#include <span>
#include <vector>

#include "nets/backend.hpp"
#include "nets/tensor.hpp"
#include "pipeline/training/loader.hpp"

namespace labpose::pipeline {

/// How a step's two loss sums make its loss: sums[0] the score maps' cross-entropy, sums[1] the
/// location refinement's Huber (0 without it).
struct LossScales {
  double score = 0.0, locref = 0.0;
  double loss(std::span<const float> sums) const { return score * sums[0] + locref * sums[1]; }
};

class PoseLoss {
 public:
  /// Allocates targets and gradients on `backend` (which must outlive it) for score maps of
  /// `score_shape` (N, J, P, Q) and location refinement of `locref_shape` (N, 2J, P, Q). Without
  /// `location_refinement` the loss is the score-map term alone and locref_gradient() stays zero.
  PoseLoss(nets::Backend& backend, const nets::Shape& score_shape, const nets::Shape& locref_shape,
           bool location_refinement, double locref_loss_weight);

  /// The uploads of `batch`'s targets and weights to this loss's tensors, appended to `copies`
  /// for one Backend::copy_all_from_host with the batch's images (before forward_backward).
  void add_target_copies(const TrainingBatch& batch, std::vector<nets::Backend::HostCopy>& copies);

  /// The loss of the network's outputs against `batch`'s targets (uploaded by
  /// add_target_copies()); leaves its gradients with
  /// respect to `score` and `locref` in score_gradient() and locref_gradient(). The location
  /// refinement's mean divides by `locref_cells`, or (negative) by the batch's weighted cells: a
  /// rank of a data-parallel job passes the mean over the ranks of their weighted_cells(), so that
  /// the mean of the ranks' losses and gradients is the whole batch's.
  // score: (N, J, P, Q), locref: (N, 2J, P, Q); batch: host targets of the same shapes
  double forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                          const TrainingBatch& batch, double locref_cells = -1);
  /// As forward_backward, with the loss's two sums left in `sums` (a flat tensor of 2 on the
  /// backend) instead of read: nothing waits for the device. Returns how the sums make the loss.
  LossScales queue_forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                                    const TrainingBatch& batch, double locref_cells,
                                    nets::Tensor& sums);
  /// The cells of `batch` that location refinement learns from (weight not 0).
  static double weighted_cells(const TrainingBatch& batch);

  const nets::Tensor& score_gradient() const { return score_gradient_; }    // (N, J, P, Q)
  const nets::Tensor& locref_gradient() const { return locref_gradient_; }  // (N, 2J, P, Q)

 private:
  double score_map_term(const nets::Tensor& score, nets::Tensor& sums);
  double locref_term(const nets::Tensor& locref, const TrainingBatch& batch, double weighted,
                     nets::Tensor& sums);

  nets::Backend& backend_;
  bool location_refinement_;
  double locref_loss_weight_;
  nets::Tensor score_target_, score_weights_, score_gradient_;     // (N, J, P, Q)
  nets::Tensor locref_target_, locref_weights_, locref_gradient_;  // (N, 2J, P, Q)
  nets::Tensor sums_;                                              // forward_backward's two sums
};

}  // namespace labpose::pipeline
