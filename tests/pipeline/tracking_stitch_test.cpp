// Stitching tracklets into tracks (DeepLabCut's TrackletStitcher) on hand-made tracklets whose
// true tracks are known: gaps, re-entry, residuals, identity deciding a swap, more tracklets than
// tracks, more at once than tracks, too few, an empty video, the whole chain from linking, and
// errors for settings and inputs that cannot be stitched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "pipeline/tracking/link.hpp"
#include "pipeline/tracking/stitch.hpp"
#include "tracking_fixture.hpp"

namespace labpose::pipeline {
namespace {
using ::testing::HasSubstr;
using tracking_test::centre_of;
using tracking_test::Point;
using tracking_test::tracklet;

Point walk_a(int f) {
  return {20.0 + 2.0 * f, 100.0};
}
Point walk_b(int f) {
  return {20.0 + 2.0 * f, 300.0};
}

Tracklets of(std::vector<Tracklet> list) {
  Tracklets tracklets;
  for (std::size_t i = 0; i < list.size(); ++i) tracklets.by_id[static_cast<int>(i)] = list[i];
  return tracklets;
}

// Every frame of `track` lies on `path`.
void expect_on_path(const Tracklet& track, Point (*path)(int), const char* name) {
  for (const auto& [frame, animal] : track) {
    const Point centre = centre_of(animal), expected = path(frame);
    EXPECT_NEAR(centre.x, expected.x, 1e-9) << name << ", frame " << frame;
    EXPECT_NEAR(centre.y, expected.y, 1e-9) << name << ", frame " << frame;
  }
}

StitchSettings two_tracks() {
  StitchSettings settings;
  settings.n_tracks = 2;
  return settings;
}

TEST(Stitching, MoreTrackletsThanTracksAcrossAnOcclusionGap) {
  // Each animal's tracklet is broken by an occlusion of 6 frames; B's second part has the lower id.
  const auto tracks = stitch_tracklets(of({tracklet(0, 29, walk_a), tracklet(36, 79, walk_b),
                                           tracklet(0, 29, walk_b), tracklet(36, 79, walk_a)}),
                                       two_tracks());
  ASSERT_EQ(tracks.tracks.size(), 2u);
  for (const auto& track : tracks.tracks) EXPECT_EQ(track.size(), 74u);
  const bool a_first = centre_of(tracks.tracks[0].begin()->second).y < 200.0;
  expect_on_path(tracks.tracks[a_first ? 0 : 1], walk_a, "A");
  expect_on_path(tracks.tracks[a_first ? 1 : 0], walk_b, "B");
  EXPECT_TRUE(tracks.left_over.empty());
}

TEST(Stitching, AnimalLeavingAndReEntering) {
  const auto back = [](int f) { return Point{400.0, 20.0 + f}; };
  auto tracks = stitch_tracklets(
      of({tracklet(0, 149, walk_a), tracklet(0, 39, back), tracklet(100, 149, back)}),
      two_tracks());
  ASSERT_EQ(tracks.tracks[0].size(), 150u);
  ASSERT_EQ(tracks.tracks[1].size(), 90u);
  EXPECT_TRUE(tracks.tracks[1].contains(39));
  EXPECT_TRUE(tracks.tracks[1].contains(100));
  // A max_gap shorter than the absence leaves no link and no cover of every tracklet by two
  // tracks: the fallback keeps the two longest chains (A and B's later part) and puts B's earlier
  // part back into the only track it fits.
  auto settings = two_tracks();
  settings.max_gap = 30;
  tracks = stitch_tracklets(
      of({tracklet(0, 149, walk_a), tracklet(0, 39, back), tracklet(100, 149, back)}), settings);
  EXPECT_EQ(tracks.tracks[0].size(), 150u);
  EXPECT_EQ(tracks.tracks[1].size(), 90u);
  EXPECT_TRUE(tracks.left_over.empty());
}

TEST(Stitching, ShortTrackletsArePutBackWhereTheyFit) {
  // A's hole 30..34 is filled by a 5-frame residual; a 4-frame one overlapping both tracks fits
  // nowhere; a 1-frame one is dropped as DeepLabCut drops them.
  const auto stray = [](int f) { return Point{600.0, 600.0 + f}; };
  const auto tracks = stitch_tracklets(
      of({tracklet(0, 29, walk_a), tracklet(35, 79, walk_a), tracklet(0, 79, walk_b),
          tracklet(30, 34, walk_a), tracklet(50, 53, stray), tracklet(70, 70, stray)}),
      two_tracks());
  const bool a_first = centre_of(tracks.tracks[0].begin()->second).y < 200.0;
  const auto& a = tracks.tracks[a_first ? 0 : 1];
  EXPECT_EQ(a.size(), 80u);
  expect_on_path(a, walk_a, "A");
  ASSERT_EQ(tracks.left_over.size(), 1u);
  EXPECT_EQ(tracks.left_over[0].size(), 4u);
}

// A walks from upper left to lower right, B from lower left to upper right; both tracklets break
// around their crossing at frame 30 (frames 27..33 missing).
Point cross_a(int f) {
  return {10.0 + 5.0 * f, 100.0 + 10.0 / 3.0 * f};
}
Point cross_b(int f) {
  return {10.0 + 5.0 * f, 300.0 - 10.0 / 3.0 * f};
}

Tracklets crossing(bool with_identity) {
  const int a = with_identity ? 0 : -1, b = with_identity ? 1 : -1;
  return of({tracklet(0, 26, cross_a, a), tracklet(34, 60, cross_a, a), tracklet(0, 26, cross_b, b),
             tracklet(34, 60, cross_b, b)});
}

TEST(Stitching, IdentityVotesDecideASwapThatDistanceGetsWrong) {
  // DeepLabCut's cost is the centroid distance across the gap: here each animal's own
  // continuation lies farther (48 px) than the other's (40 px), so without identity they swap.
  auto tracks = stitch_tracklets(crossing(false), two_tracks());
  for (const auto& track : tracks.tracks) {
    const double y0 = centre_of(track.begin()->second).y;
    const double y1 = centre_of(track.rbegin()->second).y;
    EXPECT_LT(std::abs(y1 - y0), 50.0) << "the distance cost keeps each track on its side";
  }
  // With identity votes, links between the same individual cost a hundredth: no swap.
  tracks = stitch_tracklets(crossing(true), two_tracks());
  const bool a_first = centre_of(tracks.tracks[0].begin()->second).y < 200.0;
  expect_on_path(tracks.tracks[a_first ? 0 : 1], cross_a, "A");
  expect_on_path(tracks.tracks[a_first ? 1 : 0], cross_b, "B");
  for (const auto& [frame, animal] : tracks.tracks[a_first ? 0 : 1]) EXPECT_EQ(animal.identity, 0);
  // Votes weighed 0 (votes at chance) leave the links to distance: the same swap as without votes.
  auto unweighed = two_tracks();
  unweighed.identity_weight = 0.0;
  tracks = stitch_tracklets(crossing(true), unweighed);
  for (const auto& track : tracks.tracks) {
    const double y0 = centre_of(track.begin()->second).y;
    const double y1 = centre_of(track.rbegin()->second).y;
    EXPECT_LT(std::abs(y1 - y0), 50.0);
  }
}

TEST(Stitching, MoreTrackletsAtOnceThanTracksKeepsTheLongest) {
  const auto third = [](int f) { return Point{20.0 + 2.0 * f, 500.0}; };
  const auto tracks = stitch_tracklets(
      of({tracklet(0, 79, walk_a), tracklet(10, 49, third), tracklet(0, 79, walk_b)}),
      two_tracks());
  EXPECT_EQ(tracks.tracks[0].size(), 80u);
  EXPECT_EQ(tracks.tracks[1].size(), 80u);
  ASSERT_EQ(tracks.left_over.size(), 1u);
  EXPECT_EQ(tracks.left_over[0].size(), 40u);
}

TEST(Stitching, FewerAnimalsThanTracksLeavesTracksEmpty) {
  StitchSettings settings;
  settings.n_tracks = 3;
  const auto tracks = stitch_tracklets(of({tracklet(0, 19, walk_a)}), settings);
  ASSERT_EQ(tracks.tracks.size(), 3u);
  EXPECT_EQ(tracks.tracks[0].size(), 20u);
  EXPECT_TRUE(tracks.tracks[1].empty());
  EXPECT_TRUE(tracks.tracks[2].empty());
}

TEST(Stitching, EmptyVideoGivesEmptyTracks) {
  const auto tracks = stitch_tracklets(Tracklets{}, two_tracks());
  ASSERT_EQ(tracks.tracks.size(), 2u);
  EXPECT_TRUE(tracks.tracks[0].empty());
  EXPECT_TRUE(tracks.left_over.empty());
  // Frames with no finite keypoint do not count either.
  Tracklet blank;
  blank[3] = TrackedAnimal{{KeypointPrediction{}}, -1};
  EXPECT_TRUE(stitch_tracklets(of({blank}), two_tracks()).tracks[1].empty());
}

TEST(Stitching, LinkedThenStitchedAcrossALongAbsence) {
  // B leaves for longer than max_age: linking makes two tracklets of it, stitching one track.
  std::vector<FrameAnimals> frames(200);
  for (int f = 0; f < 200; ++f) {
    auto& animals = frames[static_cast<std::size_t>(f)].assemblies.animals;
    animals.push_back(tracking_test::animal(walk_a(f)));
    if (f < 40 || f >= 160) animals.push_back(tracking_test::animal({500.0, 400.0}));
  }
  const auto tracklets = link_tracklets(frames, TrackerSettings{});
  ASSERT_EQ(tracklets.by_id.size(), 3u);
  const auto tracks = stitch_tracklets(tracklets, two_tracks());
  EXPECT_EQ(tracks.tracks[0].size(), 200u);
  expect_on_path(tracks.tracks[0], walk_a, "A");
  EXPECT_EQ(tracks.tracks[1].size(), 40u + 37u);  // reported again 3 hits after its return
}

TEST(Stitching, SettingsAndTrackletsThatCannotBeStitched) {
  const auto tracklets = of({tracklet(0, 5, walk_a), tracklet(10, 13, walk_b)});
  EXPECT_THAT([&] { stitch_tracklets(tracklets, two_tracks()); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "no tracklet is at least min_length = 10 frames long (2 tracklets, the longest "
                  "6 frames)")));
  StitchSettings settings;
  settings.n_tracks = 0;
  EXPECT_THAT([&] { stitch_tracklets(tracklets, settings); },
              ::testing::ThrowsMessage<Error>(HasSubstr("at least one track")));
  settings = two_tracks();
  settings.min_length = 2;
  EXPECT_THAT([&] { stitch_tracklets(tracklets, settings); },
              ::testing::ThrowsMessage<Error>(HasSubstr("min_length must be 3 frames or more")));
  settings.min_length = 3;
  EXPECT_EQ(stitch_tracklets(tracklets, settings).tracks[0].size(), 6u);
  settings.identity_weight = -0.5;
  EXPECT_THAT([&] { stitch_tracklets(tracklets, settings); },
              ::testing::ThrowsMessage<Error>(HasSubstr("weight of identity votes must lie in")));
}

}  // namespace
}  // namespace labpose::pipeline
