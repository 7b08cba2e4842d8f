// DeepLabCut's training loss: sigmoid cross-entropy on the score maps (mean over every cell; a
// missing keypoint gives negatives only) plus locref_loss_weight x Huber on the location-refinement
// maps (mean over the cells with weight: the disks around visible keypoints, or every cell of a
// multi-animal batch). A multi-animal model adds pairwise_loss_weight x squared error on its
// part-affinity fields, and weighs its score maps (and identity channels) by the batch's weights;
// each term is TensorFlow's SUM_BY_NONZERO_WEIGHTS mean (multi_loss_weights.hpp).
// Owns the device targets, weights and output gradients, allocated once for the batch's shapes;
// the targets go up with the batch's images in one upload.
// Not the targets' construction (targets.hpp, multi_targets.hpp) and not the backward pass.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "nets/backend.hpp"
#include "nets/tensor.hpp"
#include "pipeline/training/loader.hpp"

namespace labpose::pipeline {

/// How a step's three loss sums make its loss: sums[0] the score maps' cross-entropy, sums[1] the
/// location refinement's Huber (0 without it), sums[2] the part-affinity fields' squared error /
/// 2 (0 without them).
struct LossScales {
  double score = 0.0, locref = 0.0, paf = 0.0;
  double loss(std::span<const float> sums) const {
    return score * sums[0] + locref * sums[1] + paf * sums[2];
  }
};

/// How many values of a batch each term averages over (its non-zero weights). A rank of a
/// data-parallel job passes the mean over the ranks instead, so that the mean of the ranks' losses
/// and gradients is the whole batch's.
struct LossCounts {
  double score = 0.0, locref = 0.0, paf = 0.0;
};

/// A multi-animal model's terms: score maps weighted by the batch, and part-affinity fields.
struct MultiAnimalLoss {
  std::optional<nets::Shape> pafs;  // (N, 2E, P, Q), the network's "paf" output; none: no edges
  double paf_weight = 0.0;          // pose_cfg pairwise_loss_weight
};

class PoseLoss {
 public:
  /// Allocates targets and gradients on `backend` (which must outlive it) for score maps of
  /// `score_shape` (N, J, P, Q) and location refinement of `locref_shape` (N, 2J, P, Q). Without
  /// `location_refinement` the loss is the score-map term alone and locref_gradient() stays zero.
  /// With `multi_animal`, the score maps are weighted by the batch's score_weights and the PAF
  /// term is added.
  PoseLoss(nets::Backend& backend, const nets::Shape& score_shape, const nets::Shape& locref_shape,
           bool location_refinement, double locref_loss_weight,
           const std::optional<MultiAnimalLoss>& multi_animal = std::nullopt);

  /// The uploads of `batch`'s targets and weights to this loss's tensors, appended to `copies`
  /// for one Backend::copy_all_from_host with the batch's images (before forward_backward).
  void add_target_copies(const TrainingBatch& batch, std::vector<nets::Backend::HostCopy>& copies);

  /// The loss of the network's outputs against `batch`'s targets (uploaded by
  /// add_target_copies()); leaves its gradients with respect to `score`, `locref` and `pafs` in
  /// score_gradient(), locref_gradient() and paf_gradient(). Each term's mean divides by its
  /// count in `counts`, or (none given) by the batch's own counts().
  // score: (N, J, P, Q), locref: (N, 2J, P, Q), pafs: (N, 2E, P, Q) or none; batch: host targets of
  // the same shapes
  double forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                          const TrainingBatch& batch, const std::optional<LossCounts>& counts = {},
                          const nets::Tensor* pafs = nullptr);
  /// As forward_backward, with the loss's three sums left in `sums` (a flat tensor of 3 on the
  /// backend) instead of read: nothing waits for the device. Returns how the sums make the loss.
  LossScales queue_forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                                    const nets::Tensor* pafs, const TrainingBatch& batch,
                                    const std::optional<LossCounts>& counts, nets::Tensor& sums);
  /// The values of `batch` each term learns from (weight not 0).
  LossCounts counts(const TrainingBatch& batch) const;

  const nets::Tensor& score_gradient() const { return score_gradient_; }    // (N, J, P, Q)
  const nets::Tensor& locref_gradient() const { return locref_gradient_; }  // (N, 2J, P, Q)
  const nets::Tensor& paf_gradient() const { return paf_gradient_; }        // (N, 2E, P, Q)

 private:
  double score_map_term(const nets::Tensor& score, double cells, nets::Tensor& sums);
  double locref_term(const nets::Tensor& locref, double weighted, nets::Tensor& sums);
  double paf_term(const nets::Tensor& pafs, double weighted, nets::Tensor& sums);
  bool has_pafs() const { return multi_animal_ && multi_animal_->pafs; }

  nets::Backend& backend_;
  bool location_refinement_;
  double locref_loss_weight_;
  std::optional<MultiAnimalLoss> multi_animal_;
  nets::Tensor score_target_, score_weights_, score_gradient_;     // (N, J, P, Q)
  nets::Tensor locref_target_, locref_weights_, locref_gradient_;  // (N, 2J, P, Q)
  nets::Tensor paf_target_, paf_weights_, paf_gradient_;           // (N, 2E, P, Q)
  nets::Tensor sums_;                                              // forward_backward's three sums
};

}  // namespace labpose::pipeline
