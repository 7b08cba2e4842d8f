// The synthetic mouse and the demo project: the rendered mouse is where its keypoints say, hidden
// keypoints are under the occluder or outside the frame, rendering is deterministic, and the demo
// project is complete and valid with labels equal to the ground truth. The keypoints of a few seeds
// are pinned by their hashes.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/error.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/synthetic/mouse.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/config.hpp"
#include "projects/label_check.hpp"
#include "projects/labels.hpp"
#include "tests/pipeline/rendered_frame.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

using testing::difference;
using testing::Pixel;
using testing::Rendered;

Rendered render(const SyntheticMouse& mouse, int index, bool with_mouse) {
  return testing::render_frame(mouse, mouse.options(), index, with_mouse);
}

TEST(SyntheticMouse, TheRenderedMouseIsWhereItsKeypointsSay) {
  const SyntheticMouse mouse({320, 240, 300, 30.0, 4});
  enum { kSnout, kLeftEar, kRightEar, kTailbase };
  int occluded_frames = 0, checked_snouts = 0, checked_ears = 0;
  for (int index = 0; index < 300; index += 3) {
    const auto points = mouse.keypoints(index);
    ASSERT_EQ(points.size(), synthetic_bodyparts().size());
    const Rendered frame = render(mouse, index, true), floor = render(mouse, index, false);
    bool occluded = false;
    for (const auto& p : points) {
      const bool inside = p.x >= 0 && p.y >= 0 && p.x <= 319 && p.y <= 239;
      const bool under = mouse.occluder().contains(p.x, p.y);
      EXPECT_EQ(p.visible, inside && !under) << "frame " << index;
      if (inside && under) {
        occluded = true;
        EXPECT_EQ(difference(frame.at(p.x, p.y), floor.at(p.x, p.y)), 0)
            << "a hidden keypoint shows the occluder, frame " << index;
      }
    }
    occluded_frames += occluded ? 1 : 0;
    // Along the body axis: 5 px behind the snout is the head (not the floor), 7 px ahead is floor.
    const auto& snout = points[kSnout];
    const auto& tail = points[kTailbase];
    const double length = std::hypot(snout.x - tail.x, snout.y - tail.y);
    const double ux = (snout.x - tail.x) / length, uy = (snout.y - tail.y) / length;
    EXPECT_NEAR(length, 57.0, 1e-6) << "snout to tail base, 1 unit = 1 px at 320x240";
    const auto inward = frame.at(snout.x - 5 * ux, snout.y - 5 * uy);
    const auto outward = frame.at(snout.x + 7 * ux, snout.y + 7 * uy);
    if (snout.visible && inward && outward &&
        !mouse.occluder().contains(snout.x + 7 * ux, snout.y + 7 * uy) &&
        !mouse.occluder().contains(snout.x - 5 * ux, snout.y - 5 * uy)) {
      ++checked_snouts;
      EXPECT_GT(difference(inward, floor.at(snout.x - 5 * ux, snout.y - 5 * uy)), 150)
          << "frame " << index;
      EXPECT_LT(difference(outward, floor.at(snout.x + 7 * ux, snout.y + 7 * uy)), 40)
          << "frame " << index;
    }
    // The ears are pink: red well above green and blue.
    for (const int ear : {kLeftEar, kRightEar}) {
      if (!points[static_cast<std::size_t>(ear)].visible) continue;
      const Pixel pixel =
          frame.at(points[static_cast<std::size_t>(ear)].x, points[static_cast<std::size_t>(ear)].y)
              .value();
      ++checked_ears;
      EXPECT_GT(pixel[2] - pixel[1], 40) << "frame " << index;
      EXPECT_GT(pixel[2] - pixel[0], 40) << "frame " << index;
    }
    // 3 px in front of the tail base is dark fur.
    const auto fur = frame.at(tail.x + 3 * ux, tail.y + 3 * uy);
    if (tail.visible && fur && !mouse.occluder().contains(tail.x + 3 * ux, tail.y + 3 * uy)) {
      EXPECT_LT((*fur)[0] + (*fur)[1] + (*fur)[2], 3 * 110) << "frame " << index;
    }
  }
  EXPECT_GT(checked_snouts, 60);
  EXPECT_GT(checked_ears, 120);
  EXPECT_GT(occluded_frames, 0) << "the mouse passes under the occluder";
  EXPECT_LT(occluded_frames, 50) << "but not all the time";
}

TEST(SyntheticMouse, TheSameSeedRendersTheSameVideo) {
  const SyntheticMouse a({160, 120, 20, 30.0, 9}), b({160, 120, 20, 30.0, 9}),
      other({160, 120, 20, 30.0, 10});
  EXPECT_EQ(render(a, 17, true).bgr, render(b, 17, true).bgr);
  EXPECT_NE(render(a, 17, true).bgr, render(other, 17, true).bgr);
  EXPECT_EQ(a.keypoints(17)[0].x, b.keypoints(17)[0].x);
  EXPECT_NE(a.keypoints(17)[0].x, other.keypoints(17)[0].x);
  EXPECT_NEAR(a.keypoints(0)[0].x, a.keypoints(1)[0].x, 5.0) << "a smooth path";
  EXPECT_THROW(SyntheticMouse({16, 16, 10, 30.0, 1}), Error);
}

// FNV-1a over bytes, continuing from `hash`.
std::uint64_t fnv1a(const void* data, std::size_t size,
                    std::uint64_t hash = 14695981039346656037ull) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

// The single mouse's keypoints are those it has always had, to the bit: demo projects and their
// labels stay reproducible for a seed. (Its frames are not pinned by a hash: OpenCV's blur runs
// other SIMD code on other CPUs, and may round differently.)
TEST(SyntheticMouse, KeepsTheSameKeypointsAsEver) {
  struct Case {
    SyntheticVideoOptions options;
    std::uint64_t keypoints_hash;
  };
  const std::vector<Case> cases = {{{320, 240, 300, 30.0, 1}, 0x787b60dbc3798093ull},
                                   {{640, 480, 60, 30.0, 7}, 0x6ff5afc9176a6a10ull},
                                   {{160, 120, 20, 30.0, 9}, 0x4beff3db004f4607ull}};
  for (const Case& c : cases) {
    const SyntheticMouse mouse(c.options);
    std::uint64_t keypoints_hash = fnv1a(nullptr, 0);
    for (int index = 0; index < c.options.frames; ++index) {
      for (const SyntheticKeypoint& point : mouse.keypoints(index)) {
        keypoints_hash = fnv1a(&point.x, sizeof point.x, keypoints_hash);
        keypoints_hash = fnv1a(&point.y, sizeof point.y, keypoints_hash);
        const std::uint8_t visible = point.visible ? 1 : 0;
        keypoints_hash = fnv1a(&visible, 1, keypoints_hash);
      }
    }
    EXPECT_EQ(keypoints_hash, c.keypoints_hash) << c.options.width << "x" << c.options.height;
  }
}

TEST(DemoProject, CompleteValidAndLabeledFromTheGroundTruth) {
  const TempDir dir;
  DemoProjectOptions options;
  options.dir = dir.path();
  options.video = {320, 240, 120, 30.0, 3};
  options.labeled_frames = 12;
  const DemoProject demo = create_demo_project(options);
  ASSERT_TRUE(fs::is_regular_file(demo.config));
  EXPECT_TRUE(demo.config.parent_path().filename().string().starts_with("demo-labpose-"));
  EXPECT_EQ(fs::directory_iterator(dir.path())->path(), demo.config.parent_path())
      << "nothing else is left in the folder";

  const auto config = projects::ProjectConfig::load(demo.config);
  EXPECT_EQ(config.values().bodyparts, synthetic_bodyparts());
  EXPECT_EQ(config.values().skeleton.size(), 4u);
  EXPECT_EQ(config.values().numframes2pick, 12);
  EXPECT_TRUE(config.warnings().empty());
  const projects::CheckReport report = projects::check_project_labels(config);
  EXPECT_EQ(report.count(projects::Finding::Severity::error), 0u);
  EXPECT_EQ(report.count(projects::Finding::Severity::warning), 0u);

  EXPECT_EQ(VideoReader(demo.video).frame_count(), 120);
  ASSERT_EQ(demo.truth.size(), 120u);
  EXPECT_GE(demo.labeled_frames.size(), 10u);
  const fs::path folder = demo.config.parent_path() / "labeled-data" / "synthetic_mouse";
  const projects::LoadedLabels labels =
      projects::read_labels(projects::label_files(folder, "labpose"));
  ASSERT_EQ(labels.table.row_count(), demo.labeled_frames.size());
  for (std::size_t row = 0; row < labels.table.row_count(); ++row) {
    const std::int64_t index = demo.labeled_frames[row];
    EXPECT_EQ(projects::image_key(labels.table, row).image, fmt::format("img{:03}.png", index));
    EXPECT_TRUE(fs::is_regular_file(folder / fmt::format("img{:03}.png", index)));
    const auto& truth = demo.truth[static_cast<std::size_t>(index)];
    for (std::size_t j = 0; j < truth.size(); ++j) {
      const double x = labels.table.at(row, 2 * j), y = labels.table.at(row, 2 * j + 1);
      if (truth[j].visible) {
        EXPECT_EQ(x, truth[j].x);
        EXPECT_EQ(y, truth[j].y);
      } else {
        EXPECT_TRUE(std::isnan(x) && std::isnan(y)) << "hidden keypoints are unlabeled";
      }
    }
  }
  try {
    create_demo_project(options);
    ADD_FAILURE() << "a second demo project in the same folder";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("already exists"), std::string::npos);
  }
}

}  // namespace
}  // namespace labpose::pipeline
