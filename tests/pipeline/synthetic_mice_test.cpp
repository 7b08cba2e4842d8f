// Several synthetic mice: each rendered mouse is where its keypoints say, a keypoint is hidden
// exactly when the occluder or a mouse drawn over it covers it (or it leaves the frame), the mice
// really meet, touch and pass each other without going through each other, and a seed always gives
// the same scene.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.hpp"
#include "pipeline/synthetic/mice.hpp"
#include "pipeline/synthetic/mice_paths.hpp"
#include "tests/pipeline/rendered_frame.hpp"

namespace labpose::pipeline {
namespace {
using testing::difference;
using testing::Rendered;

enum { kSnout, kLeftEar, kRightEar, kTailbase };

Rendered render(const SyntheticMice& mice, int index, bool with_mice) {
  return testing::render_frame(mice, mice.options().video, index, with_mice);
}

SyntheticMiceOptions three_mice(int frames, std::uint64_t seed) {
  SyntheticMiceOptions options;
  options.video = {320, 240, frames, 30.0, seed};
  options.animals = 3;
  return options;
}

bool inside_frame(const SyntheticKeypoint& point, const SyntheticVideoOptions& video) {
  return point.x >= 0 && point.y >= 0 && point.x <= video.width - 1 && point.y <= video.height - 1;
}

// Whether mouse `individual` of frame `index` lies under another mouse's tail near (x, y): the
// tail starts at the tail base and reaches 42 px (plus its swing) behind it.
bool near_a_tail_above(const SyntheticMice& mice, int index, int individual, double x, double y) {
  const std::vector<int> order = mice.drawing_order(index);
  const auto rank = std::find(order.begin(), order.end(), individual);
  const auto points = mice.keypoints(index);
  return std::any_of(rank + 1, order.end(), [&](int above) {
    const SyntheticKeypoint& tail = points[static_cast<std::size_t>(above)][kTailbase];
    return std::hypot(tail.x - x, tail.y - y) < 55;
  });
}

TEST(SyntheticMice, EveryMouseIsWhereItsKeypointsSay) {
  const SyntheticMice mice(three_mice(300, 4));
  int checked_snouts = 0, checked_ears = 0;
  for (int index = 0; index < 300; index += 3) {
    const auto animals = mice.keypoints(index);
    ASSERT_EQ(animals.size(), 3u);
    const Rendered frame = render(mice, index, true), floor = render(mice, index, false);
    for (int individual = 0; individual < 3; ++individual) {
      const auto& points = animals[static_cast<std::size_t>(individual)];
      ASSERT_EQ(points.size(), synthetic_bodyparts().size());
      const auto& snout = points[kSnout];
      const auto& tail = points[kTailbase];
      const double length = std::hypot(snout.x - tail.x, snout.y - tail.y);
      EXPECT_NEAR(length, 57.0, 1e-6) << "snout to tail base, 1 unit = 1 px at 320x240";
      // 5 px behind a visible snout is a mouse's head, not the floor.
      const double ux = (snout.x - tail.x) / length, uy = (snout.y - tail.y) / length;
      const double behind_x = snout.x - 5 * ux, behind_y = snout.y - 5 * uy;
      if (snout.visible && !mice.occluder().contains(behind_x, behind_y) &&
          !near_a_tail_above(mice, index, individual, behind_x, behind_y)) {
        ++checked_snouts;
        EXPECT_GT(difference(frame.at(behind_x, behind_y), floor.at(behind_x, behind_y)), 150)
            << "mouse " << individual << ", frame " << index;
      }
      // A visible ear is pink: red well above green and blue.
      for (const int ear : {kLeftEar, kRightEar}) {
        const auto& point = points[static_cast<std::size_t>(ear)];
        if (!point.visible || near_a_tail_above(mice, index, individual, point.x, point.y))
          continue;
        ++checked_ears;
        const testing::Pixel pixel = frame.at(point.x, point.y).value();
        EXPECT_GT(pixel[2] - pixel[1], 40) << "mouse " << individual << ", frame " << index;
        EXPECT_GT(pixel[2] - pixel[0], 40) << "mouse " << individual << ", frame " << index;
      }
    }
  }
  EXPECT_GT(checked_snouts, 200);
  EXPECT_GT(checked_ears, 400);
}

TEST(SyntheticMice, AKeypointIsHiddenExactlyWhenSomethingCoversIt) {
  const SyntheticMice mice(three_mice(300, 1));
  const SyntheticVideoOptions& video = mice.options().video;
  int under_occluder = 0, under_mouse = 0, visible = 0;
  for (int index = 0; index < 300; ++index) {
    const auto animals = mice.keypoints(index);
    const std::vector<int> order = mice.drawing_order(index);
    ASSERT_TRUE(std::is_permutation(order.begin(), order.end(), std::vector<int>{0, 1, 2}.begin()));
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      if (rank > 0) {
        EXPECT_LE(mice.pose(index, order[rank - 1]).y, mice.pose(index, order[rank]).y)
            << "drawn back to front by the body centre's row";
      }
      const int individual = order[rank];
      for (const auto& point : animals[static_cast<std::size_t>(individual)]) {
        const bool occluded = mice.occluder().contains(point.x, point.y);
        const bool covered =
            std::any_of(order.begin() + static_cast<long>(rank) + 1, order.end(),
                        [&](int above) { return mice.on_body(index, above, point.x, point.y); });
        EXPECT_EQ(point.visible, inside_frame(point, video) && !occluded && !covered)
            << "mouse " << individual << ", frame " << index;
        under_occluder += inside_frame(point, video) && occluded ? 1 : 0;
        under_mouse += inside_frame(point, video) && !occluded && covered ? 1 : 0;
        visible += point.visible ? 1 : 0;
      }
    }
    // What covers a hidden keypoint is what the frame shows there: the occluder's pixels (the
    // same with and without the mice), or a mouse's body (not the floor).
    if (index % 5 != 0) continue;
    const Rendered frame = render(mice, index, true), floor = render(mice, index, false);
    for (const auto& points : animals) {
      for (const auto& point : points) {
        if (point.visible || !inside_frame(point, video)) continue;
        if (mice.occluder().contains(point.x, point.y)) {
          EXPECT_EQ(difference(frame.at(point.x, point.y), floor.at(point.x, point.y)), 0)
              << "frame " << index;
        } else {
          EXPECT_GT(difference(frame.at(point.x, point.y), floor.at(point.x, point.y)), 60)
              << "frame " << index;
        }
      }
    }
  }
  EXPECT_GT(under_occluder, 0) << "the mice pass under the occluder";
  EXPECT_GT(under_mouse, 20) << "and under each other";
  EXPECT_GT(visible, 300 * 3 * 4 * 8 / 10) << "but most keypoints are visible";
}

// In the demo's default video (300 frames, seed 1) the mice come close, touch (their bodies
// overlap in some frames) and still keep apart most of the time; over a longer video pairs pass
// each other (the line between them turns by more than 90 degrees while they are close), as in
// the 3000-frame test video of the tracking benchmark.
TEST(SyntheticMice, TheMiceMeetTouchAndPassEachOther) {
  const SyntheticMice mice(three_mice(300, 1));
  double closest = 1e9;
  int touching_frames = 0;
  for (int index = 0; index < 300; ++index) {
    bool touching = false;
    for (int a = 0; a < 3; ++a) {
      for (int b = a + 1; b < 3; ++b) {
        const auto& pa = mice.pose(index, a);
        const auto& pb = mice.pose(index, b);
        closest = std::min(closest, std::hypot(pa.x - pb.x, pa.y - pb.y));
        for (int y = static_cast<int>(pa.y) - 40; y <= pa.y + 40 && !touching; ++y) {
          for (int x = static_cast<int>(pa.x) - 40; x <= pa.x + 40 && !touching; ++x) {
            touching = mice.on_body(index, a, x, y) && mice.on_body(index, b, x, y);
          }
        }
      }
    }
    touching_frames += touching ? 1 : 0;
  }
  EXPECT_LT(closest, 35.0) << "body centres come closer than a body length";
  EXPECT_GT(closest, 15.0) << "but bodies never go through each other";
  EXPECT_GE(touching_frames, 30) << "bodies overlap in some frames";
  EXPECT_LE(touching_frames, 200) << "but not all the time";

  const SyntheticVideoOptions long_video{320, 240, 3000, 30.0, 1};
  const auto paths = synthetic::walk_together(long_video, 3);
  int passes = 0, meetings = 0;
  for (std::size_t a = 0; a < 3; ++a) {
    for (std::size_t b = a + 1; b < 3; ++b) {
      bool close = false;
      double met_at = 0;  // the direction from a to b when they came close
      for (std::size_t t = 0; t < paths[a].size(); ++t) {
        const double dx = paths[b][t].x - paths[a][t].x, dy = paths[b][t].y - paths[a][t].y;
        const double distance = std::hypot(dx, dy), direction = std::atan2(dy, dx);
        if (distance < 45 && !close) {
          close = true;
          met_at = direction;
          ++meetings;
        } else if (distance > 55 && close) {
          const double turned = std::remainder(direction - met_at, 2 * std::numbers::pi);
          passes += std::abs(turned) > std::numbers::pi / 2 ? 1 : 0;
          close = false;
        }
      }
    }
  }
  EXPECT_GE(meetings, 20) << "pairs meet every few seconds";
  EXPECT_GE(passes, 3) << "and some pass each other";
}

TEST(SyntheticMice, TheSameSeedMakesTheSameScene) {
  const SyntheticMice a(three_mice(30, 9)), b(three_mice(30, 9)), other(three_mice(30, 10));
  EXPECT_EQ(render(a, 17, true).bgr, render(b, 17, true).bgr);
  EXPECT_NE(render(a, 17, true).bgr, render(other, 17, true).bgr);
  for (int individual = 0; individual < 3; ++individual) {
    const auto i = static_cast<std::size_t>(individual);
    EXPECT_EQ(a.keypoints(17)[i][kSnout].x, b.keypoints(17)[i][kSnout].x);
    EXPECT_NE(a.keypoints(17)[i][kSnout].x, other.keypoints(17)[i][kSnout].x);
    EXPECT_NEAR(a.keypoints(0)[i][kSnout].x, a.keypoints(1)[i][kSnout].x, 5.0) << "smooth paths";
  }
  EXPECT_EQ(synthetic_individuals(3), (std::vector<std::string>{"mouse1", "mouse2", "mouse3"}));
  SyntheticMiceOptions none = three_mice(30, 1);
  none.animals = 0;
  EXPECT_THROW(SyntheticMice{none}, Error);
  EXPECT_THROW(SyntheticMice(three_mice(0, 1)), Error);
}

TEST(SyntheticMice, ShadesTellTheMiceApartOnlyWhenAskedFor) {
  SyntheticMiceOptions options = three_mice(60, 2);
  const SyntheticMice alike(options);
  options.distinct_shades = true;
  const SyntheticMice shaded(options);
  // The fur 3 px in front of each tail base, where nothing else lies: the same for every mouse
  // unless shaded, and then mouse2 (shade 0.85) darker than mouse1 (shade 1).
  int compared = 0;
  for (int index = 0; index < 60; index += 6) {
    EXPECT_EQ(alike.keypoints(index), shaded.keypoints(index)) << "the same paths";
    const Rendered plain = render(alike, index, true), distinct = render(shaded, index, true);
    for (int individual = 0; individual < 2; ++individual) {
      const auto points = alike.keypoints(index)[static_cast<std::size_t>(individual)];
      const double length = std::hypot(points[kSnout].x - points[kTailbase].x,
                                       points[kSnout].y - points[kTailbase].y);
      const double x = points[kTailbase].x + 3 * (points[kSnout].x - points[kTailbase].x) / length;
      const double y = points[kTailbase].y + 3 * (points[kSnout].y - points[kTailbase].y) / length;
      const bool clear = points[kTailbase].visible && !alike.occluder().contains(x, y) &&
                         !near_a_tail_above(alike, index, individual, x, y) &&
                         !alike.on_body(index, 2, x, y) &&
                         !alike.on_body(index, 1 - individual, x, y);
      if (!clear) continue;
      ++compared;
      const auto sum = [](const testing::Pixel& pixel) { return pixel[0] + pixel[1] + pixel[2]; };
      const int usual = sum(plain.at(x, y).value()), own = sum(distinct.at(x, y).value());
      if (individual == 0) {
        EXPECT_EQ(own, usual) << "mouse1 keeps the usual shade, frame " << index;
      } else {
        EXPECT_LT(own, usual - 10) << "mouse2 is darker, frame " << index;
      }
    }
  }
  EXPECT_GE(compared, 10);
}

TEST(SyntheticMice, FiveMiceKeepTheirBodiesApart) {
  const auto paths = synthetic::walk_together({320, 240, 600, 30.0, 3}, 5);
  ASSERT_EQ(paths.size(), 5u);
  double closest = 1e9;
  for (std::size_t t = 0; t < 600; ++t) {
    for (std::size_t a = 0; a < 5; ++a) {
      ASSERT_EQ(paths[a].size(), 600u);
      for (std::size_t b = a + 1; b < 5; ++b) {
        closest = std::min(
            closest, std::hypot(paths[a][t].x - paths[b][t].x, paths[a][t].y - paths[b][t].y));
      }
    }
  }
  EXPECT_GT(closest, 15.0);
  EXPECT_LT(closest, 35.0);
}

}  // namespace
}  // namespace labpose::pipeline
