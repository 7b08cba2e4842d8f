// PoseLoss on the reference backend against DeepLabCut's formula worked out on a tiny batch:
// sigmoid cross-entropy averaged over every score-map cell plus locref_loss_weight x Huber averaged
// over the weighted location-refinement cells, and the gradients of both terms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nets/ref/backend.hpp"
#include "pipeline/training/pose_loss.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::pipeline {
namespace {

const nets::Shape kScoreShape{1, 1, 2, 2};   // N = 1, J = 1, P = Q = 2
const nets::Shape kLocrefShape{1, 2, 2, 2};  // 2J = 2

struct TinyExample {
  std::vector<float> score = {2.0F, -1.0F, 0.5F, -3.0F};
  std::vector<float> locref = {0.5F, 3.0F, -0.2F, 9.0F, -2.5F, 0.1F, 7.0F, 0.0F};
  TrainingBatch batch;

  TinyExample() {
    batch.size = 1;
    batch.score = {1.0F, 0.0F, 1.0F, 0.0F};
    batch.locref = {0.0F, 1.0F, 0.2F, 0.0F, 0.0F, 0.0F, 0.0F, 0.0F};
    // Three weighted cells; the last two differences (9 and 7) are unweighted and must not count.
    batch.locref_weights = {1.0F, 1.0F, 0.0F, 0.0F, 1.0F, 0.0F, 0.0F, 0.0F};
  }
};

using nets::testing::download;
using nets::testing::upload;

void expect_near(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-6) << "element " << i;
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

// Cross-entropy of sigmoid(x) against a 0/1 target: -log(sigmoid(x)) or -log(1 - sigmoid(x)).
double cross_entropy(double x, double target) {
  return target == 1.0 ? -std::log(sigmoid(x)) : -std::log(1.0 - sigmoid(x));
}

// The batch's targets uploaded as the trainer does (in one upload), then the loss.
double loss_of(nets::Backend& backend, PoseLoss& loss, const nets::Tensor& score,
               const nets::Tensor& locref, const TrainingBatch& batch) {
  std::vector<nets::Backend::HostCopy> copies;
  loss.add_target_copies(batch, copies);
  backend.copy_all_from_host(copies);
  return loss.forward_backward(score, locref, batch);
}

TEST(PoseLoss, ValueAndGradientsFollowTheFormula) {
  nets::ref::RefBackend backend;
  const TinyExample example;
  const nets::Tensor score = upload(backend, kScoreShape, example.score);
  const nets::Tensor locref = upload(backend, kLocrefShape, example.locref);
  PoseLoss loss(backend, kScoreShape, kLocrefShape, true, 0.05);
  const double value = loss_of(backend, loss, score, locref, example.batch);

  double score_term = 0.0;
  std::vector<double> score_gradient;
  for (std::size_t i = 0; i < 4; ++i) {
    score_term += cross_entropy(example.score[i], example.batch.score[i]) / 4.0;
    score_gradient.push_back((sigmoid(example.score[i]) - example.batch.score[i]) / 4.0);
  }
  // Weighted differences 0.5, 2.0 (beyond delta 1: linear) and -2.5 (linear) over 3 cells.
  const double huber = 0.5 * 0.5 * 0.5 + (2.0 - 0.5) + (2.5 - 0.5);
  EXPECT_NEAR(value, score_term + 0.05 * huber / 3.0, 1e-6);
  expect_near(download(backend, loss.score_gradient()), score_gradient);
  const double scale = 0.05 / 3.0;
  expect_near(download(backend, loss.locref_gradient()),
              {scale * 0.5, scale * 1.0, 0.0, 0.0, scale * -1.0, 0.0, 0.0, 0.0});
}

TEST(PoseLoss, NoWeightedCellsOrNoLocationRefinementLeaveTheScoreTermAlone) {
  nets::ref::RefBackend backend;
  TinyExample example;
  const nets::Tensor score = upload(backend, kScoreShape, example.score);
  const nets::Tensor locref = upload(backend, kLocrefShape, example.locref);
  double score_term = 0.0;
  for (std::size_t i = 0; i < 4; ++i)
    score_term += cross_entropy(example.score[i], example.batch.score[i]) / 4.0;

  PoseLoss with_locref(backend, kScoreShape, kLocrefShape, true, 0.05);
  loss_of(backend, with_locref, score, locref, example.batch);
  std::fill(example.batch.locref_weights.begin(), example.batch.locref_weights.end(), 0.0F);
  EXPECT_NEAR(loss_of(backend, with_locref, score, locref, example.batch), score_term, 1e-6)
      << "every keypoint missing: no locref term";
  expect_near(download(backend, with_locref.locref_gradient()), std::vector<double>(8, 0.0));

  const TinyExample fresh;
  PoseLoss without_locref(backend, kScoreShape, kLocrefShape, false, 0.05);
  EXPECT_NEAR(loss_of(backend, without_locref, score, locref, fresh.batch), score_term, 1e-6);
  expect_near(download(backend, without_locref.locref_gradient()), std::vector<double>(8, 0.0));
}

}  // namespace
}  // namespace labpose::pipeline
