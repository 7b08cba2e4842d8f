// The optimizers on the reference backend against steps worked out by hand from PyTorch's
// formulas: SGD with momentum and L2 weight decay, AdamW with bias correction; updates of a range
// only; the state under its snapshot names, restored exactly, and refused when it does not fit.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "nets/optimizers.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::nets {
namespace {
using testing::download;
using testing::upload_flat;

void expect_values(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], 1e-6) << "element " << i;
}

TEST(Optimizers, SgdMomentumTwoStepsByHand) {
  ref::RefBackend backend;
  Tensor values = upload_flat(backend, Shape{4}, {1.0F, -2.0F, 0.5F, 3.0F});
  const Tensor gradients = upload_flat(backend, Shape{4}, {0.1F, 0.2F, -0.3F, 0.4F});
  SgdMomentum sgd(backend, 4, 0.9F, 0.01F);
  EXPECT_EQ(sgd.name(), "sgd");
  // velocity = g + 0.01 p; p -= 0.1 velocity. For p = 1: velocity 0.11, p 0.989.
  sgd.update(values, gradients, 0, 4, 0.1F, 1);
  expect_values(download(backend, values), {0.989, -2.018, 0.5295, 2.957});
  // velocity = 0.9 velocity + g + 0.01 p. For p = 0.989: 0.099 + 0.10989 = 0.20889.
  sgd.update(values, gradients, 0, 4, 0.1F, 2);
  expect_values(download(backend, values), {0.968111, -2.052182, 0.5855205, 2.875343});
  const auto saved = sgd.save();
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved.at("velocity").shape, (std::vector<std::int64_t>{4}));
  expect_values(saved.at("velocity").values, {0.20889, 0.34182, -0.560205, 0.81657});
}

TEST(Optimizers, AdamWTwoStepsByHand) {
  ref::RefBackend backend;
  Tensor values = upload_flat(backend, Shape{2}, {1.0F, -2.0F});
  AdamW adamw(backend, 2, 0.1F);
  EXPECT_EQ(adamw.name(), "adamw");
  // Step 1: the bias-corrected moments are g and g^2, so p = p (1 - lr wd) - lr sign(g).
  const Tensor first = upload_flat(backend, Shape{2}, {0.1F, -0.5F});
  adamw.update(values, first, 0, 2, 0.01F, 1);
  expect_values(download(backend, values), {0.989, -1.988});
  // Step 2 (g = -0.2 for the first value): m = 0.9 * 0.01 + 0.1 * -0.2 = -0.011, corrected by
  // 1 - 0.9^2; v = 0.999 * 1e-5 + 0.001 * 0.04 = 4.999e-5, corrected by 1 - 0.999^2.
  const Tensor second = upload_flat(backend, Shape{2}, {-0.2F, 0.3F});
  adamw.update(values, second, 0, 2, 0.01F, 2);
  expect_values(download(backend, values), {0.99167204, -1.98409702});
  const auto saved = adamw.save();
  ASSERT_EQ(saved.size(), 2u);
  expect_values(saved.at("first_moment").values, {-0.011, -0.015});
  expect_values(saved.at("second_moment").values, {4.999e-5, 3.3975e-4});
}

TEST(Optimizers, AnUpdateTouchesItsRangeOnly) {
  ref::RefBackend backend;
  const std::vector<float> initial = {1.0F, 2.0F, 3.0F, 4.0F, 5.0F};
  Tensor values = upload_flat(backend, Shape{5}, initial);
  const Tensor gradients = upload_flat(backend, Shape{5}, {1.0F, 1.0F, 1.0F, 1.0F, 1.0F});
  SgdMomentum sgd(backend, 5, 0.9F, 0.0F);
  sgd.update(values, gradients, 1, 3, 0.5F, 1);
  sgd.update(values, gradients, 4, 4, 0.5F, 1);  // empty: nothing
  expect_values(download(backend, values), {1.0, 1.5, 2.5, 4.0, 5.0});
  expect_values(sgd.save().at("velocity").values, {0.0, 1.0, 1.0, 0.0, 0.0});
}

TEST(Optimizers, RestoredStateContinuesExactlyAndForeignStateIsRefused) {
  ref::RefBackend backend;
  const std::vector<float> start = {0.3F, -0.7F, 1.1F};
  const Tensor gradients = upload_flat(backend, Shape{3}, {0.5F, -0.25F, 0.125F});
  Tensor straight = upload_flat(backend, Shape{3}, start);
  AdamW whole(backend, 3, 0.01F);
  whole.update(straight, gradients, 0, 3, 0.01F, 1);
  const auto saved = whole.save();
  const std::vector<float> after_one = download(backend, straight);
  whole.update(straight, gradients, 0, 3, 0.01F, 2);

  Tensor resumed = upload_flat(backend, Shape{3}, after_one);
  AdamW again(backend, 3, 0.01F);
  again.restore(saved, "snapshot-1.safetensors");
  again.update(resumed, gradients, 0, 3, 0.01F, 2);
  EXPECT_EQ(download(backend, resumed), download(backend, straight)) << "bit for bit";

  SgdMomentum sgd(backend, 3, 0.9F, 0.0F);
  try {
    sgd.restore(saved, "snapshot-1.safetensors");
    FAIL() << "AdamW's state is not SGD's";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "snapshot-1.safetensors has no sgd state for this network (velocity missing or of "
                 "the wrong size)");
  }
  AdamW larger(backend, 4, 0.01F);
  EXPECT_THROW(larger.restore(saved, "snapshot-1.safetensors"), Error) << "another network's size";
}

}  // namespace
}  // namespace labpose::nets
