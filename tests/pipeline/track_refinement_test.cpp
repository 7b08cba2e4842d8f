// Track refinement: two individuals swapped from a frame on (or in a range), the names checked
// against the file's, and the tracks saved back in place with the first version kept, in the
// layout pandas reads as before (tests/python/refined_tracks.py).
#include "pipeline/analysis/track_refinement.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/atomic_file.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;

// mouse1..mouse3 with snout and tail, "single" with arena, 8 frames; mouse3 is missing in frame 1.
projects::Table mice_tracks() {
  projects::Table table =
      animal_tracks({"mouse1", "mouse2", "mouse3"}, {"snout", "tail"}, {"arena"}, 8);
  for (std::size_t c = 12; c < 18; ++c) table.at(1, c) = std::nan("");
  return table;
}

// An HDF5 file's bytes with the seconds of its objects' modification times zeroed: libhdf5 stamps
// every dataset (as PyTables does), so two writes of one table differ there when a second passes
// between them. The message: type 0x0012, size 8, flags and 3 reserved bytes, version 1, 3 reserved
// bytes, then the 4 bytes of seconds.
std::string without_modification_times(std::string bytes) {
  static const std::string message("\x12\0\x08\0\0\0\0\0\x01\0\0\0", 12);
  for (std::size_t at = bytes.find(message); at != std::string::npos && at + 16 <= bytes.size();
       at = bytes.find(message, at + 16)) {
    bytes.replace(at + 12, 4, 4, '\0');
  }
  return bytes;
}

std::string error_of(projects::Table& table, const TrackSwap& swap) {
  try {
    swap_individuals(table, swap, "/v/miceDLC_el.h5");
  } catch (const Error& error) {
    return std::string(error.what()) + " | " + error.hint();
  }
  return "no error";
}

// Equal values, or both missing.
bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// The column of (individual, bodypart, coord) in mice_tracks().
std::size_t column(int individual, int bodypart, int coord) {
  return static_cast<std::size_t>(6 * individual + 3 * bodypart + coord);
}

TEST(TrackRefinement, SwapsEveryBodypartOfTwoIndividualsFromAFrameOn) {
  const projects::Table original = mice_tracks();
  projects::Table table = original;
  swap_individuals(table, {"mouse1", "mouse3", 3, std::nullopt}, "t.h5");
  for (std::size_t f = 0; f < table.row_count(); ++f) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 3; ++c) {
        const bool swapped = f >= 3;
        EXPECT_TRUE(
            same(table.at(f, column(0, b, c)), original.at(f, column(swapped ? 2 : 0, b, c))));
        EXPECT_TRUE(
            same(table.at(f, column(2, b, c)), original.at(f, column(swapped ? 0 : 2, b, c))));
        EXPECT_TRUE(same(table.at(f, column(1, b, c)), original.at(f, column(1, b, c))));
      }
    }
    EXPECT_EQ(table.at(f, 18), original.at(f, 18)) << "single is untouched";
  }
}

TEST(TrackRefinement, SwapsARangeWithBothEndsIncludedAndMovesMissingValues) {
  const projects::Table original = mice_tracks();
  projects::Table table = original;
  swap_individuals(table, {"mouse3", "mouse2", 1, 2}, "t.h5");
  EXPECT_EQ(table.at(0, column(1, 0, 0)), original.at(0, column(1, 0, 0)));
  EXPECT_TRUE(std::isnan(table.at(1, column(1, 1, 2)))) << "mouse3's missing frame 1 moves";
  EXPECT_EQ(table.at(1, column(2, 1, 2)), original.at(1, column(1, 1, 2)));
  EXPECT_EQ(table.at(2, column(1, 0, 1)), original.at(2, column(2, 0, 1)));
  EXPECT_EQ(table.at(3, column(1, 0, 1)), original.at(3, column(1, 0, 1))) << "3 is after --to";
  swap_individuals(table, {"mouse3", "mouse2", 1, 2}, "t.h5");
  EXPECT_TRUE(projects::same_table(table, original)) << "swapping twice undoes it";
}

TEST(TrackRefinement, RefusesUnknownNamesSingleTheSameNameAndFramesOutside) {
  projects::Table table = mice_tracks();
  const std::string unknown = error_of(table, {"mouse1", "mouse9", 0, std::nullopt});
  EXPECT_NE(unknown.find("/v/miceDLC_el.h5 has no individual \"mouse9\""), std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("mouse1, mouse2, mouse3"), std::string::npos) << unknown;
  EXPECT_NE(error_of(table, {"single", "mouse1", 0, std::nullopt}).find("cannot be swapped"),
            std::string::npos);
  EXPECT_NE(error_of(table, {"mouse2", "mouse2", 0, std::nullopt}).find("with itself"),
            std::string::npos);
  EXPECT_NE(error_of(table, {"mouse1", "mouse2", 8, std::nullopt}).find("frames 0 to 7"),
            std::string::npos);
  EXPECT_NE(error_of(table, {"mouse1", "mouse2", 4, 3}).find("frames 4 to 3"), std::string::npos);
  EXPECT_NE(error_of(table, {"mouse1", "mouse2", -1, std::nullopt}).find("frames 0 to 7"),
            std::string::npos);
  EXPECT_TRUE(projects::same_table(table, mice_tracks())) << "left as it was";

  projects::Table one_animal;
  one_animal.column_level_names = {"scorer", "bodyparts", "coords"};
  one_animal.columns = {{"s", "snout", "x"}, {"s", "snout", "y"}, {"s", "snout", "likelihood"}};
  one_animal.add_row({"0"});
  EXPECT_NE(error_of(one_animal, {"a", "b", 0, std::nullopt}).find("has no individuals"),
            std::string::npos);
}

// A file changed since it was read (another refine-tracks, stitch again) is not overwritten: the
// save refuses, writes nothing, and keeps the other change; a tracks read again saves.
TEST(TrackRefinement, ASaveRefusesAFileChangedSinceItWasRead) {
  const testing::TempDir dir;
  const fs::path h5 = dir / "miceDLC_el.h5";
  projects::write_table_hdf5(mice_tracks(), h5, "tracks");
  RefinableTracks mine = read_refinable_tracks(h5);
  RefinableTracks theirs = read_refinable_tracks(h5);
  swap_individuals(theirs.table, {"mouse1", "mouse2", 1, std::nullopt}, h5);
  save_refined_tracks(theirs);
  const std::string saved = read_file(h5);
  swap_individuals(mine.table, {"mouse2", "mouse3", 0, std::nullopt}, h5);
  try {
    save_refined_tracks(mine);
    ADD_FAILURE() << "a file changed since it was read was overwritten";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("changed since it was read"), std::string::npos)
        << error.what();
    EXPECT_NE(error.hint().find("redo the swaps"), std::string::npos) << error.hint();
  }
  EXPECT_EQ(read_file(h5), saved) << "the other change is kept";
  RefinableTracks again = read_refinable_tracks(h5);
  swap_individuals(again.table, {"mouse2", "mouse3", 0, std::nullopt}, h5);
  save_refined_tracks(again);
  swap_individuals(again.table, {"mouse2", "mouse3", 0, std::nullopt}, h5);
  save_refined_tracks(again);  // its own saves do not count as another's change
  EXPECT_EQ(without_modification_times(read_file(h5)), without_modification_times(saved));
}

TEST(TrackRefinement, SavesInPlaceWithTheCsvAndKeepsTheFirstVersionOnce) {
  const testing::TempDir dir;
  const fs::path h5 = dir / "miceDLC_el.h5", csv = dir / "miceDLC_el.csv";
  projects::write_table_hdf5(mice_tracks(), h5, "tracks");
  projects::write_table_csv(mice_tracks(), csv);
  const std::string h5_bytes = read_file(h5), csv_bytes = read_file(csv);
  ASSERT_NE(without_modification_times(h5_bytes), h5_bytes) << "the file has its times";

  RefinableTracks tracks = read_refinable_tracks(h5);
  EXPECT_EQ(tracks.key, "tracks");
  swap_individuals(tracks.table, {"mouse1", "mouse2", 2, std::nullopt}, h5);
  EXPECT_EQ(save_refined_tracks(tracks), (std::vector<fs::path>{h5, csv}));
  EXPECT_EQ(read_file(original_tracks_path(h5)), h5_bytes);
  EXPECT_EQ(read_file(original_tracks_path(csv)), csv_bytes);
  EXPECT_TRUE(projects::same_table(read_refinable_tracks(h5).table, tracks.table));
  EXPECT_TRUE(projects::same_table(projects::read_table_csv(csv), tracks.table));

  // A second save keeps the first backup; swapping back gives the first file byte for byte.
  swap_individuals(tracks.table, {"mouse1", "mouse2", 2, std::nullopt}, h5);
  save_refined_tracks(tracks);
  EXPECT_EQ(read_file(original_tracks_path(h5)), h5_bytes);
  EXPECT_EQ(without_modification_times(read_file(h5)), without_modification_times(h5_bytes))
      << "the layout analyze writes, byte for byte but for the time it was written";
  EXPECT_EQ(read_file(csv), csv_bytes);
}

TEST(TrackRefinement, ReadsDeepLabCutsKeyAndSavesUnderIt) {
  const testing::TempDir dir;
  const fs::path h5 = dir / "miceDLC_bx.h5";
  projects::write_table_hdf5(mice_tracks(), h5, "df_with_missing");
  RefinableTracks tracks = read_refinable_tracks(h5);
  EXPECT_EQ(tracks.key, "df_with_missing");
  EXPECT_EQ(save_refined_tracks(tracks), std::vector<fs::path>{h5}) << "no CSV: none written";
  EXPECT_FALSE(fs::exists(dir / "miceDLC_bx.csv"));
  EXPECT_NO_THROW(projects::read_table_hdf5(h5, "df_with_missing"));
  try {
    read_refinable_tracks(dir / "nothing_el.h5");
    FAIL() << "a missing file";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("nothing_el.h5 does not exist"), std::string::npos);
  }
}

TEST(TrackRefinement, PandasReadsTheRefinedTracksAsTheStitchedOnes) {
  const testing::TempDir dir;
  const fs::path h5 = dir / "miceDLC_el.h5";
  projects::write_table_hdf5(mice_tracks(), h5, "tracks");
  RefinableTracks tracks = read_refinable_tracks(h5);
  swap_individuals(tracks.table, {"mouse2", "mouse3", 1, 5}, h5);
  save_refined_tracks(tracks);

  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::CommandResult checked = testing::run(
      testing::shell_quote(python) + " " +
      testing::shell_quote((testing::python_scripts_dir() / "refined_tracks.py").string()) + " " +
      testing::shell_quote(h5.string()) + " " +
      testing::shell_quote(original_tracks_path(h5).string()) + " mouse2 mouse3 1 5");
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_NE(checked.output.find("ok (8, 21)"), std::string::npos) << checked.output;
}

// DeepLabCut's stitching writes pandas' "table" format: refused, with a line of pandas that
// re-saves it in the fixed format, after which the tracks are refined.
TEST(TrackRefinement, DeepLabCutsTableFormatIsRefusedWithTheLineThatResavesIt) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const testing::TempDir dir;
  const fs::path h5 = dir / "miceDLC_el.h5";
  projects::write_table_hdf5(mice_tracks(), h5, "tracks");
  const testing::CommandResult to_table =
      testing::run(testing::shell_quote(python) + " -c \"import pandas as pd; p='" + h5.string() +
                   "'; pd.read_hdf(p).to_hdf(p, key='tracks', format='table', mode='w')\"");
  ASSERT_EQ(to_table.exit_code, 0) << to_table.output;
  std::string hint;
  try {
    read_refinable_tracks(h5);
    FAIL() << "a table-format file was read";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("\"table\" format"), std::string::npos)
        << error.what();
    hint = error.hint();
  }
  const std::size_t line = hint.find("python -c ");
  ASSERT_NE(line, std::string::npos) << hint;
  const testing::CommandResult resaved =
      testing::run(testing::shell_quote(python) + hint.substr(line + 6));
  ASSERT_EQ(resaved.exit_code, 0) << resaved.output << "\n" << hint;
  EXPECT_TRUE(projects::same_table(read_refinable_tracks(h5).table, mice_tracks()));
}

}  // namespace
}  // namespace labpose::pipeline
