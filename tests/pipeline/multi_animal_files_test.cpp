// DeepLabCut's files of a multi-animal analysis from known detections, assemblies and tracks:
// frame keys as DeepLabCut pads them, Python's pickle and pandas reading every file with
// DeepLabCut's keys, shapes and values (tests/python/dlc_multi_animal_files.py), and the
// candidates of _full.pickle read back as labeled videos read them.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "pipeline/analysis/multi_animal_files.hpp"
#include "pipeline/analysis/tracklet_files.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;

constexpr std::int64_t kFrames = 12;

AnimalFileHeader two_mice_header() {
  AnimalFileHeader header;
  header.scorer = "DLC_mobnet_35_testNov29shuffle1_6";
  header.individuals = {"mouse1", "mouse2"};
  header.multi_bodyparts = {"snout", "tailbase"};
  header.unique_bodyparts = {"arena"};
  header.graph = {{0, 1}};
  header.edges = {0};
  header.frames = kFrames;
  return header;
}

// Frame i: two snouts, one tail base (none in frame 3), one arena corner.
ImageDetections detections_of(std::int64_t i) {
  const double x = 10.0 + static_cast<double>(i);
  ImageDetections detections;
  detections.candidates = {
      {{0, 1, 1, x, 20.0, 0.9}, {0, 5, 5, x + 30.0, 40.0, 0.8}}, {}, {{2, 0, 0, 1.0, 1.0, 0.7}}};
  if (i != 3) detections.candidates[1].push_back({1, 2, 2, x + 5.0, 25.0, 0.6});
  EdgeCosts costs;
  costs.sources = 2;
  costs.targets = static_cast<int>(detections.candidates[1].size());
  costs.affinity.assign(static_cast<std::size_t>(2 * costs.targets), 0.5);
  costs.length.assign(static_cast<std::size_t>(2 * costs.targets), 3.0);
  detections.costs = {costs};
  return detections;
}

Assembly animal_at(double x, double y) {
  Assembly animal;
  animal.keypoints = {{x, y, 0.9}, {x + 5.0, y + 5.0, 0.6}};
  animal.candidate = {0, 0};
  return animal;
}

TEST(MultiAnimalFiles, FrameKeysArePaddedAsDeepLabCutPadsThem) {
  EXPECT_EQ(frame_key(7, 12), "frame07");
  EXPECT_EQ(frame_key(99, 100), "frame99");
  EXPECT_EQ(frame_key(5, 1000), "frame005");
  EXPECT_EQ(frame_key(1000, 1001), "frame1000");
  EXPECT_EQ(frame_key(0, 1), "frame0");
  const MultiAnimalFiles files = multi_animal_files("/d", "m3v1", "DLC_x", TrackMethod::box);
  EXPECT_EQ(files.full_pickle, fs::path("/d/m3v1DLC_x_full.pickle"));
  EXPECT_EQ(files.assemblies_pickle, fs::path("/d/m3v1DLC_x_assemblies.pickle"));
  EXPECT_EQ(files.tracklets_pickle, fs::path("/d/m3v1DLC_x_bx.pickle"));
  EXPECT_EQ(files.tracks_h5, fs::path("/d/m3v1DLC_x_bx.h5"));
  EXPECT_EQ(multi_animal_files("/d", "v", "S", TrackMethod::ellipse).tracks_csv,
            fs::path("/d/vS_el.csv"));
}

TEST(MultiAnimalFiles, PythonReadsEveryFileWithDeepLabCutsKeysShapesAndValues) {
  const testing::TempDir dir;
  const AnimalFileHeader header = two_mice_header();
  const MultiAnimalFiles files =
      multi_animal_files(dir.path(), "mice", header.scorer, TrackMethod::ellipse);
  FullPickleWriter full(files.full_pickle, header);
  std::vector<Assemblies> assembled(static_cast<std::size_t>(kFrames));
  Tracklets tracklets;
  Tracks tracks;
  tracks.tracks.resize(2);
  for (std::int64_t i = 0; i < kFrames; ++i) {
    if (i == 6) continue;  // an undecodable frame: no entry, no animals
    full.add(i, detections_of(i));
    const double x = 10.0 + static_cast<double>(i);
    Assemblies& frame = assembled[static_cast<std::size_t>(i)];
    frame.animals = {animal_at(x, 20.0), animal_at(x + 30.0, 40.0)};
    frame.single = Assembly{{0}, {{1.0, 1.0, 0.7}}, 0, 0.0, {}};
    const int f = static_cast<int>(i);
    for (std::size_t a = 0; a < 2; ++a) {
      tracklets.by_id[static_cast<int>(a)][f] = {frame.animals[a].keypoints, -1};
      tracks.tracks[a][f] = {frame.animals[a].keypoints, -1};
    }
    tracklets.single[f] = {frame.single->keypoints, -1};
    tracks.single[f] = tracklets.single[f];
  }
  full.commit();
  write_assemblies_pickle(files.assemblies_pickle, assembled);
  write_tracklets_pickle(files.tracklets_pickle, tracklets, header);
  const projects::Table table = tracks_table(tracks, header);
  projects::write_table_hdf5(table, files.tracks_h5, "tracks");
  projects::write_table_csv(table, files.tracks_csv);
  EXPECT_EQ(table.column_count(), 3u * (2 * 2 + 1));
  EXPECT_EQ(table.row_count(), static_cast<std::size_t>(kFrames));
  EXPECT_TRUE(std::isnan(table.at(6, 0))) << "a frame without animals is a NaN row";
  const std::string bytes = testing::read_text(files.full_pickle);
  EXPECT_EQ(bytes.substr(0, 3), std::string("\x80\x03}", 3));
  EXPECT_EQ(bytes.back(), '.');

  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::CommandResult checked = testing::run(
      shell_quote(python) + " " +
      shell_quote((testing::python_scripts_dir() / "dlc_multi_animal_files.py").string()) +
      " --full " + shell_quote(files.full_pickle.string()) + " --assemblies " +
      shell_quote(files.assemblies_pickle.string()) + " --tracklets " +
      shell_quote(files.tracklets_pickle.string()) + " --h5 " +
      shell_quote(files.tracks_h5.string()) + " --csv " + shell_quote(files.tracks_csv.string()) +
      " --frames 12 --scorer " + header.scorer +
      " --individuals mouse1,mouse2 --multi snout,tailbase --unique arena"
      " --expect mouse1,snout,2,12,20 --expect mouse2,tailbase,11,56,45"
      " --expect single,arena,0,1,1");
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "ok 11 frame entries, 22 animals, 2 tracklets, 11 rows"))
      << checked.output;
}

TEST(MultiAnimalFiles, TheFullPicklesCandidatesReadBack) {
  const testing::TempDir dir;
  const AnimalFileHeader header = two_mice_header();
  const fs::path file = dir.path() / "miceDLC_x_full.pickle";
  FullPickleWriter full(file, header);
  for (std::int64_t i = 0; i < kFrames; ++i)
    if (i != 6) full.add(i, detections_of(i));
  full.commit();
  const std::vector<Candidates> read = read_full_pickle_candidates(file, kFrames, 3);
  ASSERT_EQ(read.size(), static_cast<std::size_t>(kFrames));
  for (std::int64_t i = 0; i < kFrames; ++i) {
    const Candidates expected = i == 6 ? Candidates(3) : detections_of(i).candidates;
    const Candidates& frame = read[static_cast<std::size_t>(i)];
    ASSERT_EQ(frame.size(), 3u) << "frame " << i;
    for (std::size_t j = 0; j < 3; ++j) {
      ASSERT_EQ(frame[j].size(), expected[j].size()) << "frame " << i << " bodypart " << j;
      for (std::size_t c = 0; c < frame[j].size(); ++c) {
        EXPECT_EQ(frame[j][c].bodypart, static_cast<int>(j));
        EXPECT_DOUBLE_EQ(frame[j][c].x, expected[j][c].x);
        EXPECT_DOUBLE_EQ(frame[j][c].y, expected[j][c].y);
        EXPECT_NEAR(frame[j][c].confidence, expected[j][c].confidence, 1e-7) << "float32";
      }
    }
  }

  try {
    read_full_pickle_candidates(file, kFrames, 4);
    FAIL() << "a pickle of 3 bodyparts is read as one of 4";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), file.string())) << error.what();
    EXPECT_TRUE(contains(error.what(), "\"frame00\": \"coordinates\" is a list of 3"))
        << error.what();
  }
  const fs::path missing = dir.path() / "otherDLC_x_full.pickle";
  try {
    read_full_pickle_candidates(missing, kFrames, 3);
    FAIL() << "a missing file is read";
  } catch (const Error& error) {
    EXPECT_TRUE(contains(error.what(), missing.string() + " does not exist")) << error.what();
    EXPECT_TRUE(contains(error.hint(), "labpose analyze")) << error.hint();
  }
}

}  // namespace
}  // namespace labpose::pipeline
