// score_tracks: MOTA, switches and IDF1 on hand-made tracks whose scores are known: perfect tracks,
// two tracks that swap animals, a track lost for a while, a track of nothing, a match kept while it
// holds, and inputs that cannot be compared; and the share of frames where every animal has its own
// track.
#include "pipeline/evaluation/tracking_scores.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "pipeline/synthetic/mice_test_video.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An animal of two bodyparts 10 px apart, its first one at (x, y).
std::vector<ScoredPoint> animal_at(double x, double y) {
  return {{x, y}, {x + 10.0, y}};
}
std::vector<ScoredPoint> absent() {
  return {{kNaN, kNaN}, {kNaN, kNaN}};
}

// Two animals walking apart in parallel for `frames` frames, 100 px between them.
AnimalFrames two_walkers(int frames) {
  AnimalFrames truth;
  for (int f = 0; f < frames; ++f) truth.push_back({animal_at(f, 0), animal_at(f, 100)});
  return truth;
}

TEST(TrackingScores, PerfectTracksScoreOne) {
  const AnimalFrames truth = two_walkers(10);
  AnimalFrames tracks = truth;
  for (auto& frame : tracks) frame[0][0].x += 3.0;  // 3 px off on one bodypart: 1.5 px mean
  const TrackingScores scores = score_tracks(truth, tracks, 20.0);
  EXPECT_EQ(scores.frames, 10);
  EXPECT_EQ(scores.truth, 20);
  EXPECT_EQ(scores.matches, 20);
  EXPECT_EQ(scores.misses + scores.false_positives + scores.switches, 0);
  EXPECT_DOUBLE_EQ(scores.mota, 1.0);
  EXPECT_DOUBLE_EQ(scores.idf1, 1.0);
  EXPECT_DOUBLE_EQ(scores.own_identity_frames, 1.0);
  EXPECT_NEAR(scores.mean_distance, 0.75, 1e-12);
}

TEST(TrackingScores, TracksThatSwapAnimalsCountTwoSwitchesAndHalfTheIdentities) {
  const AnimalFrames truth = two_walkers(10);
  AnimalFrames tracks = truth;
  for (std::size_t f = 5; f < 10; ++f) std::swap(tracks[f][0], tracks[f][1]);
  const TrackingScores scores = score_tracks(truth, tracks, 20.0);
  EXPECT_EQ(scores.switches, 2);
  EXPECT_DOUBLE_EQ(scores.mota, 1.0 - 2.0 / 20.0);
  EXPECT_DOUBLE_EQ(scores.idf1, 0.5);
  EXPECT_DOUBLE_EQ(scores.switches_per_1000_frames, 200.0);
  EXPECT_DOUBLE_EQ(scores.own_identity_frames, 0.5) << "either half of the video, not both";
}

TEST(TrackingScores, ALostTrackIsMissesAndATrackOfNothingIsFalsePositives) {
  const AnimalFrames truth = two_walkers(10);
  AnimalFrames tracks = truth;
  for (std::size_t f = 2; f < 5; ++f) tracks[f][0] = absent();
  for (auto& frame : tracks) frame.push_back(absent());
  tracks[7][2] = animal_at(300, 300);  // a third track, on no animal
  const TrackingScores scores = score_tracks(truth, tracks, 20.0);
  EXPECT_EQ(scores.misses, 3);
  EXPECT_EQ(scores.false_positives, 1);
  EXPECT_EQ(scores.switches, 0) << "the same track takes the animal back";
  EXPECT_EQ(scores.tracked, 18);
  EXPECT_DOUBLE_EQ(scores.mota, 1.0 - 4.0 / 20.0);
  EXPECT_DOUBLE_EQ(scores.idf1, 2.0 * 17.0 / (20.0 + 18.0));
  EXPECT_DOUBLE_EQ(scores.idp, 17.0 / 18.0);
  EXPECT_DOUBLE_EQ(scores.idr, 17.0 / 20.0);
  EXPECT_DOUBLE_EQ(scores.own_identity_frames, 7.0 / 10.0) << "frames 2-4 lack animal 0's track";
}

TEST(TrackingScores, AMatchThatStillHoldsIsKeptThoughAnotherTrackIsCloser) {
  // Two animals 8 px apart; from frame 3 on track 1 sits nearer animal 0 than track 0 does, but
  // track 0 is still within the threshold of animal 0: no switch (CLEAR MOT's continuity).
  AnimalFrames truth, tracks;
  for (int f = 0; f < 6; ++f) {
    truth.push_back({animal_at(0, 0), animal_at(0, 8)});
    if (f < 3) {
      tracks.push_back({animal_at(0, 0), animal_at(0, 8)});
    } else {
      tracks.push_back({animal_at(0, 6), animal_at(0, 1)});
    }
  }
  const TrackingScores scores = score_tracks(truth, tracks, 10.0);
  EXPECT_EQ(scores.switches, 0);
  EXPECT_EQ(scores.matches, 12);
  EXPECT_DOUBLE_EQ(scores.mota, 1.0);
}

TEST(TrackingScores, BeyondTheThresholdNothingMatches) {
  const AnimalFrames truth = two_walkers(4);
  AnimalFrames tracks = truth;
  for (auto& frame : tracks) frame[1][0].y += 50.0, frame[1][1].y += 50.0;
  const TrackingScores scores = score_tracks(truth, tracks, 20.0);
  EXPECT_EQ(scores.misses, 4);
  EXPECT_EQ(scores.false_positives, 4);
  EXPECT_DOUBLE_EQ(scores.mota, 1.0 - 8.0 / 8.0);
}

TEST(TrackingScores, InputsThatCannotBeComparedAreErrors) {
  const AnimalFrames truth = two_walkers(4);
  const auto message = [&](const AnimalFrames& tracks, double threshold) {
    try {
      score_tracks(truth, tracks, threshold);
    } catch (const Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(two_walkers(5), 20.0), HasSubstr("4 frames but the tracks have 5"));
  AnimalFrames three_parts = truth;
  three_parts[1][0].push_back({1.0, 1.0});
  EXPECT_THAT(message(three_parts, 20.0), HasSubstr("bodyparts cannot be compared"));
  EXPECT_THAT(message(truth, 0.0), HasSubstr("positive distance"));
  AnimalFrames uneven = truth;
  uneven[2].pop_back();
  EXPECT_THAT(message(uneven, 20.0), HasSubstr("frame 2 has 2 animals and 1 tracks"));
}

// A DeepLabCut multi-animal track table: individuals a and b with bodyparts snout and tail (x, y,
// likelihood), then "single" with a unique bodypart; `rows` frames.
projects::Table track_table(std::size_t rows) {
  projects::Table table;
  table.column_level_names = {"scorer", "individuals", "bodyparts", "coords"};
  for (const std::string individual : {"a", "b"}) {
    for (const std::string part : {"snout", "tail"}) {
      for (const std::string coord : {"x", "y", "likelihood"})
        table.columns.push_back({"DLC", individual, part, coord});
    }
  }
  for (const std::string coord : {"x", "y", "likelihood"})
    table.columns.push_back({"DLC", "single", "light", coord});
  table.integer_index = true;
  for (std::size_t row = 0; row < rows; ++row) {
    table.add_row({std::to_string(row)});
    for (std::size_t column = 0; column < table.column_count(); ++column)
      table.at(row, column) = static_cast<double>(100 * row + column);
  }
  return table;
}

TEST(TrackingScores, TheAnimalsOfATableInTheBodypartsOrderAsked) {
  const projects::Table table = track_table(3);
  const AnimalFrames frames = animal_frames_of(table, {"tail", "ear", "snout"}, "t.h5");
  ASSERT_EQ(frames.size(), 3u);
  ASSERT_EQ(frames[2].size(), 2u) << "a and b; single is no animal";
  ASSERT_EQ(frames[2][1].size(), 3u);
  EXPECT_EQ(frames[2][1][0].x, 209.0);  // b's tail: columns 9, 10
  EXPECT_EQ(frames[2][1][0].y, 210.0);
  EXPECT_TRUE(std::isnan(frames[2][1][1].x)) << "no ear in the table";
  EXPECT_EQ(frames[2][0][2].x, 200.0);  // a's snout: columns 0, 1
  EXPECT_DOUBLE_EQ(score_tracks(frames, frames, 1.0).mota, 1.0);
  EXPECT_EQ(animal_bodyparts_of(table, "t.h5"), (std::vector<std::string>{"snout", "tail"}))
      << "the unique bodypart light is no animal's";

  projects::Table single = track_table(0);  // a's columns alone, without the individuals level
  single.column_level_names = {"scorer", "bodyparts", "coords"};
  single.columns.resize(6);
  for (auto& column : single.columns) column.erase(column.begin() + 1);
  try {
    animal_frames_of(single, {"snout"}, "one.h5");
    ADD_FAILURE() << "a single-animal table";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("one.h5 has no individuals"));
  }
  single.column_level_names.back() = "values";
  try {
    animal_bodyparts_of(single, "one.h5");
    ADD_FAILURE() << "a table without coords";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("one.h5: this table has no bodyparts/coords levels"));
  }
}

TEST(TrackingScores, ATestVideosTruthTableIsItsScene) {
  const testing::TempDir dir;
  SyntheticMiceOptions options;
  options.video = {128, 96, 12, 30.0, 5};
  options.animals = 2;
  const MiceTestVideo files = write_mice_test_video(dir.path(), "test_mice", options);
  EXPECT_TRUE(std::filesystem::exists(files.video));
  const projects::Table table = projects::read_table_hdf5(files.truth_h5);
  EXPECT_TRUE(projects::same_table(table, projects::read_table_csv(files.truth_csv)));
  const SyntheticMice scene(options);
  const AnimalFrames truth = animal_frames_of(table, synthetic_bodyparts(), files.truth_h5);
  ASSERT_EQ(truth.size(), 12u);
  std::size_t visible = 0;
  for (std::size_t frame = 0; frame < truth.size(); ++frame) {
    const auto keypoints = scene.keypoints(static_cast<int>(frame));
    for (std::size_t animal = 0; animal < 2; ++animal) {
      for (std::size_t part = 0; part < keypoints[animal].size(); ++part) {
        const SyntheticKeypoint& want = keypoints[animal][part];
        const ScoredPoint& got = truth[frame][animal][part];
        if (!want.visible) {
          EXPECT_TRUE(std::isnan(got.x)) << "hidden: no truth";
          continue;
        }
        ++visible;
        EXPECT_DOUBLE_EQ(got.x, want.x);
        EXPECT_DOUBLE_EQ(got.y, want.y);
      }
    }
  }
  EXPECT_GT(visible, 48u);
  EXPECT_EQ(table.columns.front(),
            (std::vector<std::string>{"ground_truth", "mouse1", "snout", "x"}));
}

}  // namespace
}  // namespace labpose::pipeline
