// The identity head's votes (pipeline/assembly/identity.hpp) on hand-made maps and animals with
// known answers: the sigmoids at each candidate's cell, the individual each assembled keypoint
// favours, DeepLabCut's soft_identity of an animal, and tracklets linked by the votes alone.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "pipeline/assembly/identity.hpp"
#include "pipeline/tracking/link.hpp"

namespace labpose::pipeline {
namespace {

Candidate candidate_at(int bodypart, int row, int col, double confidence) {
  Candidate c;
  c.bodypart = bodypart;
  c.row = row;
  c.col = col;
  c.x = 8.0 * col + 4.0;
  c.y = 8.0 * row + 4.0;
  c.confidence = confidence;
  return c;
}

TEST(IdentityVotes, TheSigmoidOfEachIdentityChannelAtEachCandidatesCell) {
  // Three identity channels on a 2 x 2 grid, (I, H, W): logits 0, ln 2, ln 5 at (0, 1) and
  // ln 4, 0, ln 4 at (1, 0); the other cells would give other answers.
  const float ln2 = std::log(2.0F), ln4 = std::log(4.0F), ln5 = std::log(5.0F);
  const std::vector<float> logits = {9.0F,  0.0F, ln4,  9.0F,   // channel 0
                                     9.0F,  ln2,  0.0F, -9.0F,  // channel 1
                                     -9.0F, ln5,  ln4,  9.0F};  // channel 2
  const MapStack maps{logits, 3, 2, 2};
  const Candidates candidates = {
      {candidate_at(0, 0, 1, 0.9), candidate_at(0, 1, 0, 0.8)}, {}, {candidate_at(2, 1, 0, 0.7)}};
  const auto identity = read_identity(maps, candidates);
  ASSERT_EQ(identity.size(), 3u);
  ASSERT_EQ(identity[0].size(), 6u) << "(candidates, individuals) row-major";
  const double expected[] = {0.5, 2.0 / 3.0, 5.0 / 6.0, 0.8, 0.5, 0.8};  // 1 / (1 + exp(-logit))
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(identity[0][i], expected[i], 1e-6) << i;
  EXPECT_TRUE(identity[1].empty());
  ASSERT_EQ(identity[2].size(), 3u);
  EXPECT_NEAR(identity[2][1], 0.5, 1e-6);

  EXPECT_EQ(favoured_individual(std::span(identity[0]).first(3)), 2);
  EXPECT_EQ(favoured_individual(std::span(identity[0]).subspan(3)), 0) << "the first of ties";
  EXPECT_EQ(favoured_individual({}), -1);
  EXPECT_EQ(favoured_individual(std::vector<double>{0.0, 0.0}), -1) << "an animal without votes";

  const Candidates outside = {{candidate_at(0, 2, 0, 0.9)}};
  EXPECT_THROW(read_identity(maps, outside), Error);
}

TEST(IdentityVotes, AssembledKeypointsTakeTheIndividualTheirCandidateFavours) {
  ImageDetections detections;
  detections.candidates = {{candidate_at(0, 0, 0, 0.9), candidate_at(0, 3, 3, 0.8)},
                           {candidate_at(1, 1, 1, 0.7)}};
  detections.identity = {{0.9, 0.1, 0.2, 0.8}, {0.3, 0.7}};
  Assemblies assemblies;
  Assembly first, second;
  first.candidate = {1, 0};
  first.keypoints = {{28.0, 28.0, 0.8}, {12.0, 12.0, 0.7}};
  second.candidate = {0, -1};
  second.keypoints = {{4.0, 4.0, 0.9}, {}};
  assemblies.animals = {first, second};
  Assemblies without = assemblies;

  attach_identities(assemblies, detections);
  EXPECT_EQ(assemblies.animals[0].identity, (std::vector<int>{1, 1}));
  EXPECT_EQ(assemblies.animals[1].identity, (std::vector<int>{0, -1}));

  detections.identity.clear();  // a network without an identity head
  attach_identities(without, detections);
  EXPECT_TRUE(without.animals[0].identity.empty());
}

TEST(IdentityVotes, AnAnimalsVotesAreDeepLabCutsSoftIdentity) {
  Assembly animal;
  animal.keypoints = {{1.0, 1.0, 0.9}, {2.0, 2.0, 0.5}, {3.0, 3.0, 0.4}, {}};
  animal.identity = {1, 1, 0, 2};  // the missing keypoint's identity does not count
  // Mean likelihoods: individual 1 0.7, individual 0 0.4; softmax over those two, 0 for the rest.
  const std::vector<double> votes = identity_votes(animal, 3);
  ASSERT_EQ(votes.size(), 3u);
  const double one = 1.0 / (1.0 + std::exp(-0.3));
  EXPECT_NEAR(votes[1], one, 1e-12);
  EXPECT_NEAR(votes[0], 1.0 - one, 1e-12);
  EXPECT_EQ(votes[2], 0.0);

  animal.identity = {-1, -1, -1, -1};
  EXPECT_TRUE(identity_votes(animal, 3).empty());
  animal.identity.clear();
  EXPECT_TRUE(identity_votes(animal, 3).empty()) << "a network without an identity head";

  animal.identity = {0, 0, 3, -1};
  try {
    identity_votes(animal, 3);
    FAIL() << "individual 3 of 3 accepted";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("individual 3, but there are 3"), std::string::npos)
        << error.what();
  }
}

// Two animals that swap places every frame keep their tracklets by their votes alone.
TEST(IdentityVotes, TheIdentityTrackerFollowsTheVotes) {
  std::vector<FrameAnimals> frames(4);
  for (int i = 0; i < 4; ++i) {
    FrameAnimals& frame = frames[static_cast<std::size_t>(i)];
    for (int a = 0; a < 2; ++a) {
      Assembly animal;
      animal.candidate = {0, 0};
      const double x = 10.0 + 50.0 * a;
      animal.keypoints = {{x, 10.0, 0.9}, {x + 5.0, 15.0, 0.9}};
      // Even frames: animal 0 is individual 1; odd frames: animal 0 is individual 0.
      animal.identity.assign(2, (a + i + 1) % 2);
      frame.assemblies.animals.push_back(animal);
      frame.identity_votes.push_back(identity_votes(animal, 2));
    }
  }
  TrackerSettings settings;
  settings.method = TrackMethod::identity;
  const Tracklets tracklets = link_tracklets(frames, settings);
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  for (const auto& [id, tracklet] : tracklets.by_id) {
    ASSERT_EQ(tracklet.size(), 4u);
    for (const auto& [frame, tracked] : tracklet) {
      EXPECT_EQ(tracked.identity, id);
      const bool first_animal = (id + frame + 1) % 2 == 0;
      EXPECT_EQ(tracked.keypoints[0].x, first_animal ? 10.0 : 60.0) << "frame " << frame;
    }
  }
}

}  // namespace
}  // namespace labpose::pipeline
