// Labeled videos of several animals: each individual in its own colour (DeepLabCut's
// color_by="individual"), its name beside its topmost sure keypoint, and its own skeleton; drawn
// from a small table of tracks onto a synthetic video, without a network.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "pipeline/analysis/labeled_video.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "pipeline/video/reader.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;

constexpr int kWidth = 320, kHeight = 240;

// The BGR frames of `video`.
std::vector<std::vector<std::uint8_t>> frames_of(const fs::path& video) {
  VideoReader reader(video, {PixelOrder::bgr, std::nullopt, 1});
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<std::uint8_t> frame(reader.frame_bytes());
  while (reader.read(frame.data())) frames.push_back(frame);
  return frames;
}

// Pixel (x, y) of a BGR frame as {b, g, r}.
std::vector<int> pixel(const std::vector<std::uint8_t>& frame, int x, int y) {
  const std::size_t at = (static_cast<std::size_t>(y) * kWidth + static_cast<std::size_t>(x)) * 3;
  return {frame[at], frame[at + 1], frame[at + 2]};
}

void expect_colour(const std::vector<int>& bgr, const std::vector<int>& expected,
                   const char* what) {
  for (std::size_t c = 0; c < 3; ++c)
    EXPECT_NEAR(bgr[c], expected[c], 45) << what << " channel " << c;
}

// Two mice's tracks (snout, tail) over a 6-frame test video in `dir`, with options for 5-pixel
// disks coloured by individual.
struct TwoMice {
  explicit TwoMice(const fs::path& dir)
      : video(dir / "mice.mp4"),
        tracks(animal_tracks({"mouse1", "mouse2"}, {"snout", "tail"}, {}, 6)) {
    testing::write_test_video(video, 6, kWidth, kHeight);
    options.dotsize = 5;
    options.color_by = ColorBy::individual;
  }
  fs::path video;
  projects::Table tracks;
  LabeledVideoOptions options;
};

TEST(LabeledVideo, AnimalsInTheirOwnColoursWithTheirNames) {
  const testing::TempDir dir;
  TwoMice mice(dir.path());
  const fs::path& video = mice.video;
  const projects::Table& tracks = mice.tracks;
  LabeledVideoOptions& options = mice.options;
  options.skeleton = true;
  options.skeleton_edges = {{"snout", "tail"}};
  ASSERT_EQ(write_labeled_video(video, tracks, options, dir / "named.mp4"), 6);
  options.names = false;
  ASSERT_EQ(write_labeled_video(video, tracks, options, dir / "plain.mp4"), 6);
  const auto named = frames_of(dir / "named.mp4"), plain = frames_of(dir / "plain.mp4");
  ASSERT_EQ(named.size(), 6u);

  // Frame 2: mouse1's snout at (2, 54), tail at (12, 59); mouse2's at (102, 74) and (112, 79).
  // rainbow with two colours: purple (0.5, 0, 1) for mouse1, red for mouse2, whatever the bodypart.
  expect_colour(pixel(named[2], 12, 59), {255, 0, 128}, "mouse1's tail");
  expect_colour(pixel(named[2], 102, 74), {0, 0, 255}, "mouse2's snout");
  expect_colour(pixel(named[2], 112, 79), {0, 0, 255}, "mouse2's tail");

  // The name goes above and to the right of the topmost sure keypoint; frame 0 has none (0.1).
  const std::vector<TrackColumns> columns = track_columns(tracks);
  EXPECT_FALSE(name_tag(tracks, 0, columns, "mouse2", options.pcutoff));
  const auto tag = name_tag(tracks, 2, columns, "mouse2", options.pcutoff);
  ASSERT_TRUE(tag);
  EXPECT_DOUBLE_EQ(tag->x, 102.0);
  EXPECT_DOUBLE_EQ(tag->y, 74.0);
  const auto difference = [&](std::size_t frame, int x0, int y0, int x1, int y1) {
    double sum = 0;
    for (int y = y0; y < y1; ++y) {
      for (int x = x0; x < x1; ++x) {
        const auto a = pixel(named[frame], x, y), b = pixel(plain[frame], x, y);
        for (std::size_t c = 0; c < 3; ++c) sum += std::abs(a[c] - b[c]);
      }
    }
    return sum / ((x1 - x0) * (y1 - y0));
  };
  EXPECT_GT(difference(2, 110, 52, 160, 66), 10.0) << "mouse2's name is drawn beside it";
  EXPECT_LT(difference(2, 200, 150, 300, 230), 3.0) << "and nothing far from the animals";
}

// DeepLabCut's "plot all detections" beneath the tracks: every candidate at least pcutoff likely
// as a small grey dot, under the animals' own disks.
TEST(LabeledVideo, DetectionsAreDrawnBeneathTheTracks) {
  const testing::TempDir dir;
  TwoMice mice(dir.path());
  mice.options.names = false;
  ASSERT_EQ(write_labeled_video(mice.video, mice.tracks, mice.options, dir / "tracks.mp4"), 6);
  // In every frame: a sure detection far from the animals, an unsure one (below pcutoff 0.6) and
  // one under mouse2's snout (frame 2: (102, 74)); frame 5 has no detections at all.
  std::vector<Candidates>& detections = mice.options.detections;
  detections.resize(5);
  for (std::size_t f = 0; f < 5; ++f) {
    detections[f] = {{{0, 0, 0, 250.0, 200.0, 0.9}, {0, 0, 0, 60.0, 200.0, 0.3}},
                     {{1, 0, 0, 102.0, 74.0, 0.6}}};
  }
  ASSERT_EQ(write_labeled_video(mice.video, mice.tracks, mice.options, dir / "detections.mp4"), 6);
  const auto plain = frames_of(dir / "tracks.mp4"), drawn = frames_of(dir / "detections.mp4");
  ASSERT_EQ(drawn.size(), 6u);
  const auto difference = [&](std::size_t frame, int x, int y) {
    const auto a = pixel(drawn[frame], x, y), b = pixel(plain[frame], x, y);
    return std::abs(a[0] - b[0]) + std::abs(a[1] - b[1]) + std::abs(a[2] - b[2]);
  };
  for (std::size_t frame : {0U, 2U, 4U}) {
    EXPECT_GT(difference(frame, 250, 200), 150) << "the sure detection in frame " << frame;
    expect_colour(pixel(drawn[frame], 250, 200), {200, 200, 200}, "a detection's grey");
    EXPECT_LT(difference(frame, 60, 200), 15) << "the unsure detection in frame " << frame;
  }
  // Only the encoder's traces of frame 4's dot (a drawn one differs by about 400).
  EXPECT_LT(difference(5, 250, 200), 45) << "frame 5 has no detections";
  expect_colour(pixel(drawn[2], 102, 74), {0, 0, 255}, "mouse2's snout, drawn over its detection");
}

TEST(LabeledVideo, ColourByIsBodypartOrIndividual) {
  EXPECT_EQ(parse_color_by("individual"), ColorBy::individual);
  EXPECT_EQ(parse_color_by("bodypart"), ColorBy::bodypart);
  EXPECT_THROW(parse_color_by("animal"), UsageError);
}

}  // namespace
}  // namespace labpose::pipeline
