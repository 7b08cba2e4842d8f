// The pose loss's two terms, each a backend forward (a sum) and backward scaled to a mean.
#include "pipeline/training/pose_loss.hpp"

#include <algorithm>

namespace labpose::pipeline {

PoseLoss::PoseLoss(nets::Backend& backend, const nets::Shape& score_shape,
                   const nets::Shape& locref_shape, bool location_refinement,
                   double locref_loss_weight)
    : backend_(backend),
      location_refinement_(location_refinement),
      locref_loss_weight_(locref_loss_weight) {
  score_target_ = backend_.allocate(score_shape);
  score_weights_ = backend_.allocate(score_shape);
  backend_.fill(score_weights_, 1.0F);
  score_gradient_ = backend_.allocate(score_shape);
  locref_target_ = backend_.allocate(locref_shape);
  locref_weights_ = backend_.allocate(locref_shape);
  locref_gradient_ = backend_.allocate(locref_shape);
  backend_.fill(locref_gradient_, 0.0F);
  sums_ = backend_.allocate_flat(2);
}

double PoseLoss::weighted_cells(const TrainingBatch& batch) {
  return static_cast<double>(std::count_if(batch.locref_weights.begin(), batch.locref_weights.end(),
                                           [](float w) { return w != 0.0F; }));
}

void PoseLoss::add_target_copies(const TrainingBatch& batch,
                                 std::vector<nets::Backend::HostCopy>& copies) {
  copies.push_back({batch.score.data(), &score_target_});
  if (!location_refinement_) return;
  copies.push_back({batch.locref.data(), &locref_target_});
  copies.push_back({batch.locref_weights.data(), &locref_weights_});
}

double PoseLoss::forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                                  const TrainingBatch& batch, double locref_cells) {
  const LossScales scales = queue_forward_backward(score, locref, batch, locref_cells, sums_);
  float sums[2];
  backend_.copy_to_host(sums_, sums);
  return scales.loss(sums);
}

LossScales PoseLoss::queue_forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                                            const TrainingBatch& batch, double locref_cells,
                                            nets::Tensor& sums) {
  backend_.fill(sums, 0.0F);
  LossScales scales;
  scales.score = score_map_term(score, sums);
  if (location_refinement_) {
    scales.locref =
        locref_term(locref, batch, locref_cells >= 0 ? locref_cells : weighted_cells(batch), sums);
  }
  return scales;
}

// Sigmoid cross-entropy, mean over every score-map element (every cell weighs 1): the sum into
// sums[0]; returns its scale, 1 / cells.
double PoseLoss::score_map_term(const nets::Tensor& score, nets::Tensor& sums) {
  const auto cells = static_cast<double>(score.elements());
  backend_.sigmoid_cross_entropy_sum(score, score_target_, score_weights_, sums, 0);
  backend_.sigmoid_cross_entropy_backward(score, score_target_, score_weights_,
                                          static_cast<float>(1.0 / cells), score_gradient_);
  return 1.0 / cells;
}

// locref_loss_weight x Huber (delta 1), the sum over the cells into sums[1]; returns its scale,
// the weight divided by `weighted` (0 when there are no weighted cells, and no gradient).
double PoseLoss::locref_term(const nets::Tensor& locref, const TrainingBatch& batch,
                             double weighted, nets::Tensor& sums) {
  if (weighted == 0 || weighted_cells(batch) == 0) {
    backend_.fill(locref_gradient_, 0.0F);
    return 0.0;
  }
  const double scale = locref_loss_weight_ / weighted;
  backend_.huber_sum(locref, locref_target_, locref_weights_, 1.0F, sums, 1);
  backend_.huber_backward(locref, locref_target_, locref_weights_, 1.0F, static_cast<float>(scale),
                          locref_gradient_);
  return scale;
}

}  // namespace labpose::pipeline
