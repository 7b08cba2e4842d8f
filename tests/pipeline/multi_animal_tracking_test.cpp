// DeepLabCut's tracking steps on files (multi_animal_tracking.hpp, tracklet_files.hpp): linking and
// stitching from the _assemblies.pickle and _el.pickle read back give the files of the single pass
// analyze makes, byte for byte; pickles as DeepLabCut (numpy protocol 5, a pandas header) writes
// them are read; a missing, damaged or unsafe pickle is named.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "pipeline/analysis/analysis_metadata.hpp"
#include "pipeline/analysis/multi_animal_tracking.hpp"
#include "pipeline/analysis/track_refinement.hpp"
#include "pipeline/analysis/tracklet_files.hpp"
#include "pipeline/assembly/identity.hpp"
#include "pipeline/tracking/link.hpp"
#include "projects/table.hpp"
#include "tests/pipeline/tracking_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;
using tracking_test::animal;
using tracking_test::Point;

constexpr int kFrames = 60;

AnimalFileHeader two_mice_header() {
  AnimalFileHeader header;
  header.scorer = "DLC_mobnet_35_testNov29shuffle1_6";
  header.individuals = {"mouse1", "mouse2"};
  header.multi_bodyparts = {"snout", "leftflank", "rightflank", "tailbase"};
  header.unique_bodyparts = {"arena"};
  header.graph = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
  header.edges = {0, 1, 2, 3};
  header.frames = kFrames;
  return header;
}

// Two mice crossing the frame in opposite directions, unseen in frames 20-22 and (the second)
// in 40-44, with a missing keypoint now and then, and an arena corner in every other frame.
std::vector<Assemblies> two_mice() {
  std::vector<Assemblies> frames(kFrames);
  for (int i = 0; i < kFrames; ++i) {
    Assemblies& frame = frames[static_cast<std::size_t>(i)];
    if (i % 2 == 0) frame.single = Assembly{{0}, {{3.0, 4.0, 0.5}}, 0, 0.0, {}};
    if (i >= 20 && i <= 22) continue;
    frame.animals.push_back(animal(Point{20.0 + 3.0 * i, 50.0}));
    if (i < 40 || i > 44) frame.animals.push_back(animal(Point{220.0 - 3.0 * i, 120.0}, 3.14));
    if (i % 7 == 0) frame.animals.front().keypoints[1] = KeypointPrediction{};
  }
  return frames;
}

TrackerSettings ellipse_tracker() {
  TrackerSettings settings;
  settings.method = TrackMethod::ellipse;
  return settings;
}

StitchSettings two_tracks() {
  StitchSettings settings;
  settings.n_tracks = 2;
  return settings;
}

TEST(MultiAnimalTracking, StepsFromTheFilesGiveTheFilesOfTheSinglePass) {
  const testing::TempDir dir;
  const AnimalFileHeader header = two_mice_header();
  const std::vector<Assemblies> assembled = two_mice();
  fs::create_directories(dir.path() / "once");
  fs::create_directories(dir.path() / "steps");
  const MultiAnimalFiles once =
      multi_animal_files(dir.path() / "once", "mice", header.scorer, TrackMethod::ellipse);
  const MultiAnimalFiles steps =
      multi_animal_files(dir.path() / "steps", "mice", header.scorer, TrackMethod::ellipse);

  // analyze's single pass: the assemblies in memory.
  const Tracklets tracklets =
      track_assemblies(assembled, ellipse_tracker(), header, once.tracklets_pickle);
  stitch_into_tracks(tracklets, two_tracks(), header, once, true, "mice.mp4");
  EXPECT_GE(tracklets.by_id.size(), 2u);

  // track, then stitch: each from the file the step before wrote.
  write_assemblies_pickle(steps.assemblies_pickle, assembled);
  const auto read = read_assemblies_pickle(steps.assemblies_pickle, kFrames, 4, 1);
  ASSERT_EQ(read.size(), static_cast<std::size_t>(kFrames));
  EXPECT_EQ(read[7].animals.size(), 2u);
  EXPECT_TRUE(std::isnan(read[7].animals[0].keypoints[1].x)) << "a missing keypoint stays missing";
  EXPECT_DOUBLE_EQ(read[7].animals[1].keypoints[0].y, assembled[7].animals[1].keypoints[0].y);
  EXPECT_TRUE(read[20].animals.empty());
  EXPECT_TRUE(read[2].single.has_value());
  EXPECT_FALSE(read[3].single.has_value());
  track_assemblies(read, ellipse_tracker(), header, steps.tracklets_pickle);
  const Tracklets read_tracklets = read_tracklets_pickle(steps.tracklets_pickle, 4, 1);
  EXPECT_EQ(read_tracklets.by_id.size(), tracklets.by_id.size());
  EXPECT_EQ(read_tracklets.single.size(), tracklets.single.size());
  // refine-tracks' backups of tracks stitched before are of tracks no longer there: removed.
  testing::write_text(original_tracks_path(steps.tracks_h5), "earlier tracks");
  testing::write_text(original_tracks_path(steps.tracks_csv), "earlier tracks");
  stitch_into_tracks(read_tracklets, two_tracks(), header, steps, true, "mice.mp4");
  EXPECT_FALSE(fs::exists(original_tracks_path(steps.tracks_h5)));
  EXPECT_FALSE(fs::exists(original_tracks_path(steps.tracks_csv)));

  EXPECT_EQ(testing::read_text(steps.tracklets_pickle), testing::read_text(once.tracklets_pickle));
  EXPECT_EQ(testing::read_text(steps.tracks_csv), testing::read_text(once.tracks_csv));
  const projects::Table tracks = projects::read_table_hdf5(steps.tracks_h5, "tracks");
  const projects::Table expected = projects::read_table_hdf5(once.tracks_h5, "tracks");
  ASSERT_EQ(tracks.row_count(), expected.row_count());
  ASSERT_EQ(tracks.column_count(), expected.column_count());
  for (std::size_t r = 0; r < tracks.row_count(); ++r) {
    for (std::size_t c = 0; c < tracks.column_count(); ++c) {
      const double a = tracks.at(r, c), b = expected.at(r, c);
      EXPECT_TRUE((std::isnan(a) && std::isnan(b)) || a == b) << r << ", " << c;
    }
  }
}

TEST(MultiAnimalTracking, MissingDamagedAndUnsafePicklesAreNamed) {
  const testing::TempDir dir;
  const fs::path missing = dir.path() / "miceDLC_x_assemblies.pickle";
  try {
    read_assemblies_pickle(missing, 10, 4, 0);
    FAIL() << "a missing file is read";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), missing.string())) << error.what();
    EXPECT_TRUE(contains(error.hint(), "labpose analyze")) << error.hint();
  }
  const fs::path truncated = dir.path() / "miceDLC_x_el.pickle";
  write_tracklets_pickle(dir.path() / "whole.pickle", Tracklets{}, two_mice_header());
  const std::string whole = testing::read_text(dir.path() / "whole.pickle");
  testing::write_text(truncated, whole.substr(0, whole.size() / 2));
  try {
    read_tracklets_pickle(truncated, 4, 1);
    FAIL() << "a truncated file is read";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), truncated.string())) << error.what();
  }
  // pickle.dumps({0: os.system}) in protocol 2: refused by name, never run.
  const fs::path unsafe = dir.path() / "unsafe_assemblies.pickle";
  testing::write_text(unsafe, std::string("\x80\x02}q\x00K\x00"
                                          "cposix\nsystem\nq\x01s.",
                                          25));
  try {
    read_assemblies_pickle(unsafe, 10, 4, 0);
    FAIL() << "a pickle naming posix.system is read";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), "posix.system")) << error.what();
    EXPECT_TRUE(contains(error.what(), unsafe.string())) << error.what();
  }
}

// labpose track and stitch take a video's frame count from its analysis's _meta.json, so that the
// video's packets are not read again; only while the video is the one analyzed (path and size).
// Two mice walking side by side, 6 px apart, whose identity votes are right in even frames and
// swapped in odd ones: votes at chance.
std::vector<Assemblies> side_by_side_voting_at_chance() {
  std::vector<Assemblies> frames(30);
  for (int i = 0; i < 30; ++i) {
    for (int mouse = 0; mouse < 2; ++mouse) {
      Assembly walker = animal(Point{100.0 + 2.0 * i, 100.0 + 6.0 * mouse});
      walker.identity.assign(walker.keypoints.size(), i % 2 == 0 ? mouse : 1 - mouse);
      frames[static_cast<std::size_t>(i)].animals.push_back(walker);
    }
  }
  return frames;
}

// Whether a tracklet changes mice: its y moves by more than 3 px from one frame to the next.
bool changes_mice(const Tracklets& tracklets) {
  for (const auto& [id, tracklet] : tracklets.by_id) {
    for (auto it = tracklet.begin(); std::next(it) != tracklet.end(); ++it) {
      if (std::abs(tracking_test::centre_of(std::next(it)->second).y -
                   tracking_test::centre_of(it->second).y) > 3.0)
        return true;
    }
  }
  return false;
}

TEST(MultiAnimalTracking, IdentityVotesCountAsMuchAsTheyAgreeWithTheTracklets) {
  const testing::TempDir dir;
  AnimalFileHeader header = two_mice_header();
  header.unique_bodyparts.clear();
  header.identity_channels = 2;
  header.frames = 30;
  const auto assembled = side_by_side_voting_at_chance();
  // At full weight (a same-individual match counts double) the votes pull the tracklets across.
  std::vector<FrameAnimals> frames(assembled.size());
  for (std::size_t i = 0; i < assembled.size(); ++i) {
    frames[i].assemblies = assembled[i];
    for (const Assembly& walker : assembled[i].animals)
      frames[i].identity_votes.push_back(identity_votes(walker, 2));
  }
  EXPECT_TRUE(changes_mice(link_tracklets(frames, ellipse_tracker())));
  // Measured, these votes agree with their tracklets half the time, as chance does: weight 0.
  const Tracklets tracklets =
      track_assemblies(assembled, ellipse_tracker(), header, dir.path() / "mice_el.pickle");
  ASSERT_EQ(tracklets.by_id.size(), 2u);
  EXPECT_FALSE(changes_mice(tracklets));
  for (const auto& [id, tracklet] : tracklets.by_id) EXPECT_EQ(tracklet.size(), 30u);
}

TEST(MultiAnimalTracking, TheStepsTakeTheFrameCountTheAnalysisRecorded) {
  const testing::TempDir dir;
  const fs::path video = dir.path() / "mice.mp4";
  testing::write_text(video, "never decoded: its path and size are what is compared");
  AnalysisModel model;
  model.scorer = "DLC_mobnet_35_testNov29shuffle1_6";
  VideoAnalysis result;
  result.video = video;
  result.frames = 1234;
  result.files = analysis_files(dir.path(), "mice", model.scorer);
  const AnalysisIdentity identity =
      AnalysisIdentity::of_video(video, 1234, model.scorer, "snapshot-6", std::nullopt, 1);
  write_analysis_metadata(model, result, VideoInfo{}, identity, AnalysisRun{});
  EXPECT_EQ(analyzed_frame_count(result.files, video), std::optional<std::int64_t>(1234));
  EXPECT_FALSE(analyzed_frame_count(analysis_files(dir.path(), "rats", model.scorer), video))
      << "no metadata";
  EXPECT_FALSE(analyzed_frame_count(result.files, dir.path() / "copy" / "mice.mp4"))
      << "another path";
  testing::write_text(video, "another video of another size");
  EXPECT_FALSE(analyzed_frame_count(result.files, video)) << "the video changed";
}

// {0: numpy._frombuffer(data, dtype("<f8"), (2, 2, 3), "F")}: an _assemblies.pickle whose one
// array is in Fortran order, as np.asfortranarray leaves it, written by hand.
TEST(MultiAnimalTracking, ReadsAFortranOrderArrayInItsOrder) {
  const auto value = [](int animal, int bodypart, int coord) {
    return 100.0 * animal + 10.0 * bodypart + coord + 1.0;
  };
  std::string data(2 * 2 * 3 * 8, '\0');
  for (int a = 0; a < 2; ++a) {
    for (int j = 0; j < 2; ++j) {
      for (int k = 0; k < 3; ++k) {
        const double number = value(a, j, k);
        std::memcpy(data.data() + 8 * (a + 2 * j + 4 * k), &number, 8);  // the first index fastest
      }
    }
  }
  const std::string pickle =
      std::string("\x80\x02}K\x00", 5) + "cnumpy.core.numeric\n_frombuffer\n(C" +
      static_cast<char>(data.size()) + data + "cnumpy\ndtype\n(" +
      std::string(
          "X\x02\x00\x00\x00"
          "f8\x89\x88tR",
          11) +  // dtype("f8", False, True)
      std::string("(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb",
                  26) +  // BUILD (3, "<", None, None, None, -1, -1, 0): little-endian
      std::string(
          "K\x02K\x02K\x03\x87X\x01\x00\x00\x00"
          "FtRs.",
          17);  // (2, 2, 3), "F"
  const testing::TempDir dir;
  const fs::path file = dir.path() / "fortran_assemblies.pickle";
  testing::write_text(file, pickle);
  const auto frames = read_assemblies_pickle(file, 1, 2, 0);
  ASSERT_EQ(frames.size(), 1u);
  ASSERT_EQ(frames[0].animals.size(), 2u);
  for (int a = 0; a < 2; ++a) {
    for (int j = 0; j < 2; ++j) {
      const KeypointPrediction& keypoint =
          frames[0].animals[static_cast<std::size_t>(a)].keypoints[static_cast<std::size_t>(j)];
      EXPECT_EQ(keypoint.x, value(a, j, 0)) << a << ", " << j;
      EXPECT_EQ(keypoint.y, value(a, j, 1)) << a << ", " << j;
      EXPECT_EQ(keypoint.likelihood, value(a, j, 2)) << a << ", " << j;
    }
  }
}

// DeepLabCut writes with pickle.HIGHEST_PROTOCOL: numpy arrays through _frombuffer and
// bytearrays, float32 assemblies padded with NaN animals, and a pandas MultiIndex header.
TEST(MultiAnimalTracking, ReadsThePicklesDeepLabCutWrites) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::TempDir dir;
  const fs::path assemblies = dir.path() / "dlc_assemblies.pickle";
  const fs::path tracklets = dir.path() / "dlc_el.pickle";
  const std::string script =
      "import pickle, sys, numpy as np, pandas as pd\n"
      "a = np.full((3, 2, 3), np.nan, dtype=np.float32)\n"
      "a[0] = [[1, 2, 0.5], [3, 4, 0.25]]\n"
      "a[1, 1] = [5, 6, 0.75]\n"
      "ass = {0: np.concatenate((a, np.full((3, 2, 1), -1.0, np.float32)), axis=-1), 1: a[:1],\n"
      "       'single': {0: np.array([[7.0, 8.0, 0.5]])}}\n"
      "pickle.dump(ass, open(sys.argv[1], 'wb'), pickle.HIGHEST_PROTOCOL)\n"
      "header = pd.MultiIndex.from_product([['DLC_x'], ['snout', 'tail'], ['x', 'y', "
      "'likelihood']], names=['scorer', 'bodyparts', 'coords'])\n"
      "t = {'header': header, 3: {'frame01': np.array([[1.0, 2, 0.5, 1], [np.nan] * 4]),\n"
      "     'frame02': np.asfortranarray([[1.5, 2.5, 0.5, 1], [3, 4, 0.5, 1]])}}\n"
      "pickle.dump(t, open(sys.argv[2], 'wb'), pickle.HIGHEST_PROTOCOL)\n";
  testing::write_text(dir.path() / "write.py", script);
  const testing::CommandResult written =
      testing::run(shell_quote(python) + " " + shell_quote((dir.path() / "write.py").string()) +
                   " " + shell_quote(assemblies.string()) + " " + shell_quote(tracklets.string()));
  ASSERT_EQ(written.exit_code, 0) << written.output;

  const auto frames = read_assemblies_pickle(assemblies, 2, 2, 1);
  ASSERT_EQ(frames.size(), 2u);
  ASSERT_EQ(frames[0].animals.size(), 2u) << "the all-NaN animal is left out";
  EXPECT_DOUBLE_EQ(frames[0].animals[0].keypoints[1].x, 3.0);
  EXPECT_DOUBLE_EQ(frames[0].animals[0].keypoints[1].likelihood, 0.25);
  EXPECT_TRUE(std::isnan(frames[0].animals[1].keypoints[0].x));
  EXPECT_DOUBLE_EQ(frames[0].animals[1].keypoints[1].y, 6.0);
  EXPECT_EQ(frames[1].animals.size(), 1u);
  ASSERT_TRUE(frames[0].single.has_value());
  EXPECT_DOUBLE_EQ(frames[0].single->keypoints[0].y, 8.0);

  const Tracklets read = read_tracklets_pickle(tracklets, 2, 0);
  ASSERT_EQ(read.by_id.size(), 1u);
  const Tracklet& tracklet = read.by_id.at(3);
  ASSERT_EQ(tracklet.size(), 2u);
  EXPECT_EQ(tracklet.at(1).identity, 1);
  EXPECT_TRUE(std::isnan(tracklet.at(1).keypoints[1].x));
  EXPECT_DOUBLE_EQ(tracklet.at(2).keypoints[0].y, 2.5) << "a Fortran-order array";
  EXPECT_DOUBLE_EQ(tracklet.at(2).keypoints[1].x, 3.0);
}

}  // namespace
}  // namespace labpose::pipeline
