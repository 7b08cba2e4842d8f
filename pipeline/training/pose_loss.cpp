// The pose loss's terms, each a backend forward (a sum) and backward scaled to a mean.
#include "pipeline/training/pose_loss.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

double nonzero(const std::vector<float>& weights) {
  return static_cast<double>(
      std::count_if(weights.begin(), weights.end(), [](float w) { return w != 0.0F; }));
}

// Huber's delta for a plain squared error: no difference reaches it, so huber(d) = d^2 / 2.
constexpr float kNoDelta = std::numeric_limits<float>::max();

}  // namespace

PoseLoss::PoseLoss(nets::Backend& backend, const nets::Shape& score_shape,
                   const nets::Shape& locref_shape, bool location_refinement,
                   double locref_loss_weight, const std::optional<MultiAnimalLoss>& multi_animal)
    : backend_(backend),
      location_refinement_(location_refinement),
      locref_loss_weight_(locref_loss_weight),
      multi_animal_(multi_animal) {
  score_target_ = backend_.allocate(score_shape);
  score_weights_ = backend_.allocate(score_shape);
  backend_.fill(score_weights_, 1.0F);
  score_gradient_ = backend_.allocate(score_shape);
  locref_target_ = backend_.allocate(locref_shape);
  locref_weights_ = backend_.allocate(locref_shape);
  locref_gradient_ = backend_.allocate(locref_shape);
  backend_.fill(locref_gradient_, 0.0F);
  if (has_pafs()) {
    paf_target_ = backend_.allocate(*multi_animal_->pafs);
    paf_weights_ = backend_.allocate(*multi_animal_->pafs);
    paf_gradient_ = backend_.allocate(*multi_animal_->pafs);
    backend_.fill(paf_gradient_, 0.0F);
  }
  sums_ = backend_.allocate_flat(3);
}

LossCounts PoseLoss::counts(const TrainingBatch& batch) const {
  LossCounts counts;
  counts.score =
      multi_animal_ ? nonzero(batch.score_weights) : static_cast<double>(batch.score.size());
  counts.locref = nonzero(batch.locref_weights);
  if (has_pafs()) counts.paf = nonzero(batch.paf_weights);
  return counts;
}

void PoseLoss::add_target_copies(const TrainingBatch& batch,
                                 std::vector<nets::Backend::HostCopy>& copies) {
  copies.push_back({batch.score.data(), &score_target_});
  if (multi_animal_) copies.push_back({batch.score_weights.data(), &score_weights_});
  if (has_pafs()) {
    copies.push_back({batch.pafs.data(), &paf_target_});
    copies.push_back({batch.paf_weights.data(), &paf_weights_});
  }
  if (!location_refinement_) return;
  copies.push_back({batch.locref.data(), &locref_target_});
  copies.push_back({batch.locref_weights.data(), &locref_weights_});
}

double PoseLoss::forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                                  const TrainingBatch& batch,
                                  const std::optional<LossCounts>& counts,
                                  const nets::Tensor* pafs) {
  const LossScales scales = queue_forward_backward(score, locref, pafs, batch, counts, sums_);
  float sums[3];
  backend_.copy_to_host(sums_, sums);
  return scales.loss(sums);
}

LossScales PoseLoss::queue_forward_backward(const nets::Tensor& score, const nets::Tensor& locref,
                                            const nets::Tensor* pafs, const TrainingBatch& batch,
                                            const std::optional<LossCounts>& counts,
                                            nets::Tensor& sums) {
  const LossCounts own = this->counts(batch);
  const LossCounts& divide = counts ? *counts : own;
  backend_.fill(sums, 0.0F);
  LossScales scales;
  scales.score = score_map_term(score, own.score > 0 ? divide.score : 0.0, sums);
  if (location_refinement_) {
    scales.locref = locref_term(locref, own.locref > 0 ? divide.locref : 0.0, sums);
  }
  if (has_pafs()) {
    LABPOSE_ASSERT(pafs != nullptr);
    scales.paf = paf_term(*pafs, own.paf > 0 ? divide.paf : 0.0, sums);
  }
  return scales;
}

// Sigmoid cross-entropy, the weighted sum into sums[0]; returns its scale, 1 / cells (every cell
// of a single-animal batch, the weighted cells of a multi-animal one).
double PoseLoss::score_map_term(const nets::Tensor& score, double cells, nets::Tensor& sums) {
  const double scale = cells > 0 ? 1.0 / cells : 0.0;
  backend_.sigmoid_cross_entropy_sum(score, score_target_, score_weights_, sums, 0);
  backend_.sigmoid_cross_entropy_backward(score, score_target_, score_weights_,
                                          static_cast<float>(scale), score_gradient_);
  return scale;
}

// locref_loss_weight x Huber (delta 1), the sum over the cells into sums[1]; returns its scale,
// the weight divided by `weighted` (0 when there are no weighted cells, and no gradient).
double PoseLoss::locref_term(const nets::Tensor& locref, double weighted, nets::Tensor& sums) {
  if (weighted == 0) {
    backend_.fill(locref_gradient_, 0.0F);
    return 0.0;
  }
  const double scale = locref_loss_weight_ / weighted;
  backend_.huber_sum(locref, locref_target_, locref_weights_, 1.0F, sums, 1);
  backend_.huber_backward(locref, locref_target_, locref_weights_, 1.0F, static_cast<float>(scale),
                          locref_gradient_);
  return scale;
}

// pairwise_loss_weight x squared error (TensorFlow's mean_squared_error, no 1/2): the sum of d^2 /
// 2 into sums[2], so its scale is twice the weight divided by `weighted`.
double PoseLoss::paf_term(const nets::Tensor& pafs, double weighted, nets::Tensor& sums) {
  if (weighted == 0) {
    backend_.fill(paf_gradient_, 0.0F);
    return 0.0;
  }
  const double scale = 2.0 * multi_animal_->paf_weight / weighted;
  backend_.huber_sum(pafs, paf_target_, paf_weights_, kNoDelta, sums, 2);
  backend_.huber_backward(pafs, paf_target_, paf_weights_, kNoDelta, static_cast<float>(scale),
                          paf_gradient_);
  return scale;
}

}  // namespace labpose::pipeline
