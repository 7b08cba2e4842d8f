// The reliability of identity votes, measured on the tracklets that carry them: votes that always
// agree with their piece weigh as DeepLabCut's do, votes at chance weigh nothing, and holes,
// short pieces, frames without votes and a single individual are handled as documented.
#include <gtest/gtest.h>

#include <vector>

#include "pipeline/tracking/identity_reliability.hpp"
#include "tracking_fixture.hpp"

namespace labpose::pipeline {
namespace {
using tracking_test::Point;
using tracking_test::tracklet;

Point walk(int f) {
  return {20.0 + 2.0 * f, 100.0};
}

// A tracklet of frames [from, to] whose frame f votes votes[(f - from) % votes.size()].
Tracklet voting(int from, int to, const std::vector<int>& votes) {
  Tracklet result = tracklet(from, to, walk);
  for (auto& [frame, animal] : result)
    animal.identity = votes[static_cast<std::size_t>(frame - from) % votes.size()];
  return result;
}

TEST(IdentityReliability, VotesThatAlwaysAgreeWeighAsDeepLabCutDoes) {
  Tracklets tracklets;
  tracklets.by_id[0] = voting(0, 29, {0});
  tracklets.by_id[1] = voting(0, 29, {2});
  const auto reliability = identity_reliability(tracklets, 3);
  ASSERT_TRUE(reliability);
  EXPECT_DOUBLE_EQ(reliability->agreement, 1.0);
  EXPECT_DOUBLE_EQ(reliability->chance, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(reliability->weight, 1.0);
  EXPECT_EQ(reliability->frames, 60u);
}

TEST(IdentityReliability, VotesAtChanceWeighNothing) {
  Tracklets tracklets;
  tracklets.by_id[0] = voting(0, 29, {0, 1, 2});
  tracklets.by_id[5] = voting(0, 29, {2, 0, 1});
  const auto reliability = identity_reliability(tracklets, 3);
  ASSERT_TRUE(reliability);
  EXPECT_DOUBLE_EQ(reliability->agreement, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(reliability->weight, 0.0);
  // Two individuals whose votes split 50:50 are at chance too; fewer agreeing cannot go below 0.
  tracklets.by_id.erase(5);
  tracklets.by_id[0] = voting(0, 29, {0, 1});
  EXPECT_DOUBLE_EQ(identity_reliability(tracklets, 2)->weight, 0.0);
  EXPECT_DOUBLE_EQ(identity_reliability(tracklets, 4)->weight, 1.0 / 3.0);
}

TEST(IdentityReliability, FourOfFiveAgreeingAmongThree) {
  Tracklets tracklets;
  tracklets.by_id[0] = voting(0, 49, {1, 1, 0, 1, 1});
  const auto reliability = identity_reliability(tracklets, 3);
  ASSERT_TRUE(reliability);
  EXPECT_DOUBLE_EQ(reliability->agreement, 0.8);
  EXPECT_NEAR(reliability->weight, (0.8 - 1.0 / 3.0) / (2.0 / 3.0), 1e-12);
}

TEST(IdentityReliability, PiecesEndAtHolesAndShortOnesAndUnvotedFramesDoNotCount) {
  // A tracklet that follows one animal, then after a hole another: each piece agrees with itself.
  Tracklets tracklets;
  tracklets.by_id[0] = voting(0, 19, {0});
  for (auto& [frame, animal] : voting(25, 44, {1})) tracklets.by_id[0][frame] = animal;
  // A piece of 9 frames (below min_length 10) of mixed votes is left out.
  tracklets.by_id[1] = voting(0, 8, {0, 1});
  // Frames without a vote (-1) count neither way.
  tracklets.by_id[2] = voting(0, 19, {2, -1});
  auto reliability = identity_reliability(tracklets, 3);
  ASSERT_TRUE(reliability);
  EXPECT_DOUBLE_EQ(reliability->agreement, 1.0);
  EXPECT_EQ(reliability->frames, 50u);
  // With min_length 5 the short piece counts: 5 of its 9 frames agree.
  reliability = identity_reliability(tracklets, 3, 5);
  ASSERT_TRUE(reliability);
  EXPECT_EQ(reliability->frames, 59u);
  EXPECT_DOUBLE_EQ(reliability->agreement, 55.0 / 59.0);
}

TEST(IdentityReliability, NothingToMeasure) {
  Tracklets tracklets;
  EXPECT_FALSE(identity_reliability(tracklets, 3));
  tracklets.by_id[0] = tracklet(0, 29, walk);  // no votes
  EXPECT_FALSE(identity_reliability(tracklets, 3));
  tracklets.by_id[1] = voting(0, 29, {0});
  EXPECT_TRUE(identity_reliability(tracklets, 3));
  EXPECT_FALSE(identity_reliability(tracklets, 1));  // one individual: nothing to tell apart
  // Votes for an individual beyond those named are not counted.
  tracklets.by_id[1] = voting(0, 29, {7});
  EXPECT_FALSE(identity_reliability(tracklets, 3));
}

}  // namespace
}  // namespace labpose::pipeline
