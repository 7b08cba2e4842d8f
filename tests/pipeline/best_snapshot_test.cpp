// The best snapshot by the running mean of test errors: a lucky evaluation of a small test set is
// not chosen, early stopping counts evaluations of the mean, and a resumed run decides exactly as
// an uninterrupted one.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "pipeline/training/best_snapshot.hpp"

namespace labpose::pipeline {
namespace {

std::vector<bool> observe_all(BestSnapshot& best, const std::vector<double>& errors) {
  std::vector<bool> improved;
  for (const double error : errors) improved.push_back(best.observe(error));
  return improved;
}

TEST(BestSnapshot, ALuckyEvaluationIsNotTheBest) {
  BestSnapshot best;
  // Running means (window 3): 10, 6, 7.33, 7.33, 8.33, 6.67, 5. The single 2 px evaluation would
  // be the plain minimum; the mean picks the run of 5 px at the end.
  const auto improved = observe_all(best, {10, 2, 10, 10, 5, 5, 5});
  EXPECT_EQ(improved, (std::vector<bool>{true, true, false, false, false, false, true}));
  ASSERT_TRUE(best.best().has_value());
  EXPECT_DOUBLE_EQ(*best.best(), 5.0);
  EXPECT_EQ(best.evaluations_without_improvement(), 0);
}

TEST(BestSnapshot, CountsEvaluationsWithoutImprovementOfTheMean) {
  BestSnapshot best;
  EXPECT_FALSE(best.best().has_value());
  EXPECT_TRUE(std::isnan(best.smoothed()));
  observe_all(best, {4, 4, 4, 4.5});
  EXPECT_EQ(best.evaluations_without_improvement(), 3);
  EXPECT_DOUBLE_EQ(best.smoothed(), (4 + 4 + 4.5) / 3.0);
}

TEST(BestSnapshot, ARestoredStateDecidesAsTheUninterruptedOne) {
  const std::vector<double> before = {9.1, 7.3, 8.7, 6.9, 7.7};
  const std::vector<double> after = {6.1, 7.9, 5.2, 6.6, 6.4, 9.0};
  BestSnapshot uninterrupted;
  observe_all(uninterrupted, before);
  std::map<std::string, std::string> metadata;
  uninterrupted.save(metadata);
  BestSnapshot resumed;
  resumed.restore(metadata);
  EXPECT_EQ(resumed.best(), uninterrupted.best());
  EXPECT_EQ(resumed.smoothed(), uninterrupted.smoothed()) << "the recent errors are kept exactly";
  EXPECT_EQ(observe_all(resumed, after), observe_all(uninterrupted, after));
  EXPECT_EQ(resumed.best(), uninterrupted.best());
  EXPECT_EQ(resumed.evaluations_without_improvement(),
            uninterrupted.evaluations_without_improvement());
}

TEST(BestSnapshot, ASnapshotFromBeforeTheMeanKeepsItsBest) {
  BestSnapshot best;
  best.restore({{"best_test_error", "0x1.8p+1"}, {"evaluations_without_improvement", "2"}});
  ASSERT_TRUE(best.best().has_value());
  EXPECT_DOUBLE_EQ(*best.best(), 3.0);
  EXPECT_EQ(best.evaluations_without_improvement(), 2);
  EXPECT_FALSE(best.observe(3.5));
  EXPECT_TRUE(best.observe(1.0)) << "mean of 3.5 and 1.0";
}

}  // namespace
}  // namespace labpose::pipeline
