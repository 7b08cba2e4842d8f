// filter, plot-trajectories, labeled-video and extract-outliers on a multi-animal project through
// the CLI: they find the stitched tracks (<video><scorer>_el.h5) by the project's tracker, name a
// missing one with the command to run, and write DeepLabCut's files of several animals. The tracks
// are a small table written by the test (tests/pipeline/animal_tracks.hpp) beside a stand-in
// snapshot, so no network is trained or run.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "projects/table.hpp"
#include "tests/pipeline/animal_tracks.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;

// The path a command's warning names before "does not exist".
fs::path missing_path(const std::string& output) {
  const std::size_t end = output.find(" does not exist");
  if (end == std::string::npos) return {};
  const std::size_t start = output.rfind(": ", end);
  return output.substr(start + 2, end - start - 2);
}

TEST(MultiAnimalDownstreamCli, FilterPlotAndDrawTheStitchedTracks) {
  const testing::TempDir dir;
  fs::create_directories(dir.path() / "mice");
  const testing::CommandResult made = testing::run_labpose(
      "--quiet demo --project-only --animals 3 --frames 20 --labeled-frames "
      "4 --dir " +
      shell_quote((dir.path() / "mice").string()));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const fs::path config = made.output.substr(0, made.output.find('\n'));
  const std::string c = shell_quote(config.string());
  const testing::CommandResult created = testing::run_labpose(
      "--quiet create-dataset " + c + " --net mobilenet_v2_0.35 --weights none");
  ASSERT_EQ(created.exit_code, 0) << created.output;
  // A stand-in snapshot: these commands only need its name for the scorer.
  for (const auto& entry :
       fs::recursive_directory_iterator(config.parent_path() / "labpose-models")) {
    if (entry.path().filename() == "train")
      testing::write_text(entry.path() / "snapshot-4.safetensors", "");
  }
  const fs::path video = config.parent_path() / "videos" / "synthetic_mice.mp4";
  const std::string v = shell_quote(video.string());
  const std::string dest = " --dest " + shell_quote((dir.path() / "out").string());
  fs::create_directories(dir.path() / "out");

  // Before analyze: the _el.h5 is named, with the command that makes it.
  const testing::CommandResult early = testing::run_labpose("filter " + c + " " + v + dest);
  EXPECT_EQ(early.exit_code, 1) << early.output;
  EXPECT_TRUE(contains(early.output, "analyze it first: labpose analyze")) << early.output;
  const fs::path el = missing_path(early.output);
  ASSERT_EQ(el.filename().string().substr(el.filename().string().size() - 6), "_el.h5")
      << early.output;
  const testing::CommandResult box =
      testing::run_labpose("filter " + c + " " + v + dest + " --track-method box");
  EXPECT_TRUE(contains(box.output, "_bx.h5 does not exist")) << box.output;
  const testing::CommandResult skeleton =
      testing::run_labpose("filter " + c + " " + v + dest + " --track-method skeleton");
  EXPECT_EQ(skeleton.exit_code, 2) << skeleton.output;
  EXPECT_TRUE(contains(skeleton.output, "--track-method skeleton is not a tracker labpose has"))
      << skeleton.output;

  projects::write_table_hdf5(
      pipeline::animal_tracks({"individual1", "individual2", "individual3"},
                              {"bodypart1", "bodypart2", "bodypart3"}, {}, 20),
      el, "tracks");
  const std::string stem = el.stem().string();  // <video><scorer>_el
  const testing::CommandResult filtered = testing::run_labpose("filter " + c + " " + v + dest);
  ASSERT_EQ(filtered.exit_code, 0) << filtered.output;
  const fs::path filtered_h5 = el.parent_path() / (stem + "_filtered.h5");
  EXPECT_TRUE(contains(filtered.output, filtered_h5.string())) << filtered.output;
  const std::string csv = testing::read_text(el.parent_path() / (stem + "_filtered.csv"));
  EXPECT_TRUE(contains(csv, "\nindividuals,individual1,")) << csv.substr(0, 300);

  const testing::CommandResult plotted =
      testing::run_labpose("plot-trajectories " + c + " " + v + dest + " --filtered");
  ASSERT_EQ(plotted.exit_code, 0) << plotted.output;
  for (const char* name : {"trajectory_filteredindividual1.png", "hist_filteredindividual3.png"}) {
    EXPECT_TRUE(fs::exists(dir.path() / "out" / "plot-poses" / "synthetic_mice" / name)) << name;
  }

  const testing::CommandResult drawn = testing::run_labpose("labeled-video " + c + " " + v + dest +
                                                            " --filtered --skeleton --pcutoff 0.5");
  ASSERT_EQ(drawn.exit_code, 0) << drawn.output;
  EXPECT_TRUE(fs::exists(el.parent_path() / (stem + "_filtered_id_p50_labeled.mp4")))
      << drawn.output;

  // extract-outliers: individual1 and individual2 swap identities over frames 13..16.
  projects::Table swapped = projects::read_table_hdf5(el);
  for (std::size_t row = 13; row < 17; ++row) {
    for (std::size_t column = 0; column < 9; ++column)
      std::swap(swapped.at(row, column), swapped.at(row, column + 9));
  }
  projects::write_table_hdf5(swapped, el, "tracks");
  const testing::CommandResult outliers =
      testing::run_labpose("extract-outliers " + c + " " + v + dest + " --algo jump");
  ASSERT_EQ(outliers.exit_code, 0) << outliers.output;
  EXPECT_TRUE(contains(outliers.output, "2 outlier frames found")) << outliers.output;
  const projects::Table machine = projects::read_table_hdf5(
      config.parent_path() / "labeled-data" / "synthetic_mice" / "machinelabels-iter0.h5");
  EXPECT_EQ(machine.column_level_names,
            (std::vector<std::string>{"scorer", "individuals", "bodyparts", "coords"}));
}

}  // namespace
}  // namespace labpose
