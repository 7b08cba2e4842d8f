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
  double loss = score_map_term(score);
  if (location_refinement_) {
    loss += locref_term(locref, batch, locref_cells >= 0 ? locref_cells : weighted_cells(batch));
  }
  return loss;
}

// Sigmoid cross-entropy, mean over every score-map element (every cell weighs 1).
double PoseLoss::score_map_term(const nets::Tensor& score) {
  const auto cells = static_cast<double>(score.elements());
  const double loss =
      backend_.sigmoid_cross_entropy_forward(score, score_target_, score_weights_) / cells;
  backend_.sigmoid_cross_entropy_backward(score, score_target_, score_weights_,
                                          static_cast<float>(1.0 / cells), score_gradient_);
  return loss;
}

// locref_loss_weight x Huber (delta 1), the sum over the cells divided by `weighted`; 0 when there
// are none.
double PoseLoss::locref_term(const nets::Tensor& locref, const TrainingBatch& batch,
                             double weighted) {
  if (weighted == 0 || weighted_cells(batch) == 0) {
    backend_.fill(locref_gradient_, 0.0F);
    return 0.0;
  }
  const double scale = locref_loss_weight_ / weighted;
  const double loss = scale * backend_.huber_forward(locref, locref_target_, locref_weights_, 1.0F);
  backend_.huber_backward(locref, locref_target_, locref_weights_, 1.0F, static_cast<float>(scale),
                          locref_gradient_);
  return loss;
}

}  // namespace labpose::pipeline
