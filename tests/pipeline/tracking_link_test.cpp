// The frame-to-frame trackers (DeepLabCut's SORTEllipse and SORTBox) on hand-made animals with
// known paths: parallel walks, a crossing, an occlusion, leaving and re-entering, identity-only
// linking, the ellipse and box geometry, and errors for frames that disagree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "core/error.hpp"
#include "pipeline/tracking/box.hpp"
#include "pipeline/tracking/ellipse.hpp"
#include "pipeline/tracking/link.hpp"
#include "tracking_fixture.hpp"

namespace labpose::pipeline {
namespace {
using ::testing::HasSubstr;
using tracking_test::animal;
using tracking_test::centre_of;
using tracking_test::Point;

// frames[f]: one animal per path that is present (path returns NaN x where absent).
std::vector<FrameAnimals> video(int frames, const std::vector<std::function<Point(int)>>& paths,
                                const std::vector<double>& headings = {}) {
  std::vector<FrameAnimals> result(static_cast<std::size_t>(frames));
  for (int f = 0; f < frames; ++f) {
    for (std::size_t p = 0; p < paths.size(); ++p) {
      const Point centre = paths[p](f);
      if (std::isnan(centre.x)) continue;
      result[static_cast<std::size_t>(f)].assemblies.animals.push_back(
          animal(centre, headings.empty() ? 0.0 : headings[p]));
    }
  }
  return result;
}

TEST(Ellipse, FitsTheTwoSigmaCovarianceEllipse) {
  std::vector<KeypointPrediction> points = {{-2, 0, 1}, {2, 0, 1}, {0, 1, 1}, {0, -1, 1}};
  const auto ellipse = fit_ellipse(points);
  ASSERT_TRUE(ellipse.has_value());
  EXPECT_NEAR(ellipse->x, 0.0, 1e-12);
  EXPECT_NEAR(ellipse->width, 4.0 * std::sqrt(8.0 / 3.0), 1e-9);  // 2 sd sqrt(var x), ddof 1
  EXPECT_NEAR(ellipse->height, 4.0 * std::sqrt(2.0 / 3.0), 1e-9);
  EXPECT_NEAR(ellipse->theta, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(ellipse_similarity(*ellipse, *ellipse), 1.0);
  // Rotated a quarter turn: same centre, perpendicular axes -> 0.8 only.
  const auto turned = fit_ellipse({{0, -2, 1}, {0, 2, 1}, {1, 0, 1}, {-1, 0, 1}});
  ASSERT_TRUE(turned.has_value());
  EXPECT_NEAR(turned->theta, std::numbers::pi / 2, 1e-12);
  EXPECT_NEAR(ellipse_similarity(*ellipse, *turned), 0.8, 1e-12);
  // Fewer than three finite keypoints: no ellipse.
  EXPECT_FALSE(fit_ellipse({{1, 1, 1}, {2, 2, 1}, {std::nan(""), 3, 1}}).has_value());
}

TEST(Box, OverlapOfKeypointBoxesWithSlack) {
  const auto a = keypoint_box({{0, 0, 1}, {10, 10, 1}}, 0.0);
  const auto b = keypoint_box({{5, 0, 1}, {15, 10, 1}}, 0.0);
  ASSERT_TRUE(a && b);
  EXPECT_NEAR(box_iou(*a, *b), 50.0 / 150.0, 1e-12);
  EXPECT_FALSE(keypoint_box({{3, 3, 1}}, 0.0).has_value());  // one keypoint needs slack
  const auto grown = keypoint_box({{3, 3, 1}}, 40.0);
  ASSERT_TRUE(grown.has_value());
  EXPECT_DOUBLE_EQ(grown->x2 - grown->x1, 80.0);
  const auto z = box_to_measurement(*a);
  const auto back = measurement_to_box(z[0], z[1], z[2], z[3]);
  EXPECT_NEAR(back.x1, 0.0, 1e-12);
  EXPECT_NEAR(back.y2, 10.0, 1e-12);
}

// Every tracklet keeps one animal: its centre moves no more than `step` px per frame seen.
void expect_no_jumps(const Tracklets& tracklets, double step) {
  for (const auto& [id, tracklet] : tracklets.by_id) {
    const TrackedAnimal* previous = nullptr;
    int previous_frame = 0;
    for (const auto& [frame, tracked] : tracklet) {
      if (previous) {
        const Point a = centre_of(*previous), b = centre_of(tracked);
        EXPECT_LE(std::hypot(a.x - b.x, a.y - b.y), step * (frame - previous_frame))
            << "tracklet " << id << " jumps at frame " << frame;
      }
      previous = &tracked;
      previous_frame = frame;
    }
  }
}

TEST(EllipseTracker, TwoAnimalsCrossingKeepTheirTracklets) {
  // A walks right and down, B left and down; they cross at frame 20, bodies facing their way.
  const auto a = [](int f) { return Point{100.0 + 6.0 * f, 100.0 + 3.0 * f}; };
  const auto b = [](int f) { return Point{340.0 - 6.0 * f, 100.0 + 3.0 * f}; };
  const double heading_a = std::atan2(3.0, 6.0), heading_b = std::atan2(3.0, -6.0);
  const auto tracklets =
      link_tracklets(video(40, {a, b}, {heading_a, heading_b}), TrackerSettings{});
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  for (const auto& [id, tracklet] : tracklets.by_id) EXPECT_EQ(tracklet.size(), 40u);
  expect_no_jumps(tracklets, 7.0);
  // Tracklet 0 is A's (first animal of frame 0) from the first frame to the last.
  EXPECT_NEAR(centre_of(tracklets.by_id.at(0).at(39)).x, a(39).x, 1e-9);
  EXPECT_NEAR(centre_of(tracklets.by_id.at(1).at(39)).x, b(39).x, 1e-9);
}

TEST(EllipseTracker, OcclusionOfSeveralFramesKeepsTheTrackletId) {
  const auto a = [](int f) { return Point{50.0 + 2.0 * f, 100.0}; };
  const auto b = [](int f) {
    return f >= 10 && f < 16 ? Point{std::nan(""), 0.0} : Point{50.0 + 2.0 * f, 300.0};
  };
  const auto tracklets = link_tracklets(video(40, {a, b}), TrackerSettings{});
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  const auto& hidden = tracklets.by_id.at(1);
  EXPECT_TRUE(hidden.contains(9));
  // Seen again at 16, reported again once matched min_hits = 3 times in a row (from 18).
  EXPECT_FALSE(hidden.contains(16));
  EXPECT_FALSE(hidden.contains(17));
  EXPECT_TRUE(hidden.contains(18));
  EXPECT_EQ(hidden.size(), 10u + 22u);
  EXPECT_EQ(tracklets.by_id.at(0).size(), 40u);
}

TEST(EllipseTracker, AnimalAwayLongerThanMaxAgeComesBackAsANewTracklet) {
  const auto a = [](int f) { return Point{50.0, 100.0 + 0.5 * f}; };
  const auto b = [](int f) {
    return f >= 20 && f < 130 ? Point{std::nan(""), 0.0} : Point{300.0, 300.0};
  };
  TrackerSettings settings;
  settings.max_age = 100;
  const auto tracklets = link_tracklets(video(150, {a, b}), settings);
  ASSERT_EQ(tracklets.by_id.size(), 3u);
  EXPECT_EQ(tracklets.by_id.at(1).rbegin()->first, 19);
  EXPECT_EQ(tracklets.by_id.at(2).begin()->first, 133);  // new target, reported after 3 hits
  // With a longer memory the same animal keeps its id.
  settings.max_age = 200;
  const auto remembered = link_tracklets(video(150, {a, b}), settings);
  EXPECT_EQ(remembered.by_id.size(), 2u);
}

TEST(BoxTracker, TwoAnimalsSideBySide) {
  const auto a = [](int f) { return Point{100.0 + 3.0 * f, 100.0}; };
  const auto b = [](int f) { return Point{100.0 + 3.0 * f, 160.0}; };
  TrackerSettings settings;
  settings.method = TrackMethod::box;
  const auto tracklets = link_tracklets(video(30, {a, b}), settings);
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  EXPECT_EQ(tracklets.by_id.at(0).size(), 30u);
  EXPECT_NEAR(centre_of(tracklets.by_id.at(0).at(29)).y, 100.0, 1e-9);
  EXPECT_NEAR(centre_of(tracklets.by_id.at(1).at(29)).y, 160.0, 1e-9);
  // A jump far beyond any overlap starts a new tracklet.
  const auto jumper = [](int f) { return Point{f < 15 ? 100.0 : 400.0, 100.0}; };
  EXPECT_EQ(link_tracklets(video(30, {jumper}), settings).by_id.size(), 2u);
}

TEST(BoxTracker, SingleKeypointAnimalsNeedSlack) {
  std::vector<FrameAnimals> frames(10);
  for (int f = 0; f < 10; ++f) {
    Assembly dot;
    dot.keypoints = {{100.0 + f, 50.0, 0.9}};
    frames[static_cast<std::size_t>(f)].assemblies.animals.push_back(dot);
  }
  TrackerSettings settings;
  settings.method = TrackMethod::box;
  EXPECT_TRUE(link_tracklets(frames, settings).by_id.empty());
  settings.bounding_box_slack = 40.0;  // what DeepLabCut sets for one bodypart
  const auto tracklets = link_tracklets(frames, settings);
  ASSERT_EQ(tracklets.by_id.size(), 1u);
  EXPECT_EQ(tracklets.by_id.at(0).size(), 10u);
}

TEST(IdentityLinking, VotesPutEachAnimalInItsIndividualsTracklet) {
  auto frames = video(6, {[](int f) {
                            return Point{10.0 * f, 0.0};
                          },
                          [](int f) {
                            return Point{10.0 * f, 100.0};
                          }});
  for (std::size_t f = 0; f < frames.size(); ++f) {
    // The animals' order in each frame alternates; the votes follow the animals.
    if (f % 2 == 1) std::swap(frames[f].assemblies.animals[0], frames[f].assemblies.animals[1]);
    const bool swapped = f % 2 == 1;
    frames[f].identity_votes = {swapped ? std::vector<double>{0.2, 0.8} : std::vector{0.7, 0.3},
                                swapped ? std::vector<double>{0.9, 0.1} : std::vector{0.4, 0.6}};
  }
  TrackerSettings settings;
  settings.method = TrackMethod::identity;
  const auto tracklets = link_tracklets(frames, settings);
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  for (const auto& [frame, tracked] : tracklets.by_id.at(0)) {
    EXPECT_NEAR(centre_of(tracked).y, 0.0, 1e-9) << "frame " << frame;
    EXPECT_EQ(tracked.identity, 0);
  }
  for (const auto& [frame, tracked] : tracklets.by_id.at(1))
    EXPECT_NEAR(centre_of(tracked).y, 100.0, 1e-9) << "frame " << frame;
}

TEST(EllipseTracker, TheWeightOfIdentityVotesDecidesWhetherWrongVotesSwapTwoAnimals) {
  // Two animals walk side by side, GAP px apart. Their votes are right for 10 frames, then each
  // votes for the other: DeepLabCut's double weight of a same-identity match takes each tracklet
  // to the other animal; with the votes weighed 0 the tracker follows the motion.
  constexpr double kGap = 6.0;
  auto frames = video(30, {[](int f) {
                             return Point{100.0 + 2.0 * f, 100.0};
                           },
                           [](int f) {
                             return Point{100.0 + 2.0 * f, 100.0 + kGap};
                           }});
  for (std::size_t f = 0; f < frames.size(); ++f) {
    const bool wrong = f >= 10;
    frames[f].identity_votes = {wrong ? std::vector<double>{0.2, 0.8} : std::vector{0.8, 0.2},
                                wrong ? std::vector<double>{0.8, 0.2} : std::vector{0.2, 0.8}};
  }
  const auto ends_on = [](const Tracklets& tracklets, int id) {
    return centre_of(tracklets.by_id.at(id).rbegin()->second).y;
  };
  TrackerSettings settings;  // identity_weight 1: DeepLabCut's
  auto tracklets = link_tracklets(frames, settings);
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  EXPECT_NEAR(centre_of(tracklets.by_id.at(0).begin()->second).y, 100.0, 1e-9);
  EXPECT_NEAR(ends_on(tracklets, 0), 100.0 + kGap, 1e-9) << "the votes swap the animals";
  settings.identity_weight = 0.0;
  tracklets = link_tracklets(frames, settings);
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  EXPECT_NEAR(ends_on(tracklets, 0), 100.0, 1e-9) << "motion alone keeps them";
  EXPECT_NEAR(ends_on(tracklets, 1), 100.0 + kGap, 1e-9);
  expect_no_jumps(tracklets, 3.0);
  settings.identity_weight = 1.5;
  EXPECT_THAT([&] { link_tracklets(frames, settings); },
              ::testing::ThrowsMessage<Error>(HasSubstr("weight of identity votes")));
}

TEST(Linking, EmptyVideoAndUniqueBodyparts) {
  EXPECT_TRUE(link_tracklets({}, TrackerSettings{}).by_id.empty());
  std::vector<FrameAnimals> frames(3);
  frames[1].assemblies.single = Assembly{};
  frames[1].assemblies.single->keypoints = {{5.0, 6.0, 0.8}};
  const auto tracklets = link_tracklets(frames, TrackerSettings{});
  EXPECT_TRUE(tracklets.by_id.empty());
  ASSERT_EQ(tracklets.single.size(), 1u);
  EXPECT_DOUBLE_EQ(tracklets.single.at(1).keypoints[0].x, 5.0);
}

TEST(Linking, FramesThatDisagreeAreReportedWithTheFrame) {
  auto frames = video(5, {[](int f) { return Point{10.0 * f, 0.0}; }});
  frames[3].assemblies.animals[0].keypoints.pop_back();
  try {
    link_tracklets(frames, TrackerSettings{});
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("frame 3: animal 0 has 3 bodyparts"));
    EXPECT_THAT(error.what(), HasSubstr("frame 0 have 4"));
  }
  frames = video(5, {[](int f) { return Point{10.0 * f, 0.0}; }});
  frames[2].identity_votes = {{0.5, 0.5}, {0.1, 0.9}};
  EXPECT_THAT([&] { link_tracklets(frames, TrackerSettings{}); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("identity votes for 2 animals, but 1 animals were assembled")));
  TrackerSettings identity_only;
  identity_only.method = TrackMethod::identity;
  frames[2].identity_votes.clear();
  EXPECT_THAT([&] { link_tracklets(frames, identity_only); },
              ::testing::ThrowsMessage<Error>(HasSubstr("needs identity votes")));
  TrackerSettings bad;
  bad.iou_threshold = 1.5;
  EXPECT_THAT([&] { link_tracklets(frames, bad); },
              ::testing::ThrowsMessage<Error>(HasSubstr("iou_threshold must lie in [0, 1]")));
  bad = TrackerSettings{};
  bad.max_age = -1;
  EXPECT_THAT([&] { link_tracklets(frames, bad); },
              ::testing::ThrowsMessage<Error>(HasSubstr("max_age")));
}

}  // namespace
}  // namespace labpose::pipeline
