// filter, plot-trajectories, labeled-video and extract-outliers on a multi-animal project through
// the CLI: they find the stitched tracks (<video><scorer>_el.h5) by the project's tracker, name a
// missing one with the command to run, and write DeepLabCut's files of several animals;
// labeled-video --draw-detections draws the _full.pickle's detections too, or names it when it is
// missing. The tracks and detections are written by the test (tests/pipeline/animal_tracks.hpp)
// beside a stand-in snapshot, so no network is trained or run.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/analysis/multi_animal_files.hpp"
#include "pipeline/video/reader.hpp"
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

// Frame `index` of `video`, BGR.
std::vector<std::uint8_t> frame_of(const fs::path& video, std::int64_t index) {
  pipeline::VideoReader reader(video, {pipeline::PixelOrder::bgr, std::nullopt, 1});
  std::vector<std::uint8_t> frame(reader.frame_bytes());
  reader.seek(index);
  EXPECT_TRUE(reader.read(frame.data()));
  return frame;
}

// The mean difference of two BGR frames `width` wide over the square of side 2 * half + 1 around
// (x, y), per pixel (the sum over the channels).
double difference_around(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                         int width, int x, int y, int half) {
  double sum = 0;
  for (int row = y - half; row <= y + half; ++row) {
    for (int col = x - half; col <= x + half; ++col) {
      const std::size_t at = (static_cast<std::size_t>(row) * static_cast<std::size_t>(width) +
                              static_cast<std::size_t>(col)) *
                             3;
      for (std::size_t c = 0; c < 3; ++c)
        sum += std::abs(static_cast<int>(a[at + c]) - static_cast<int>(b[at + c]));
    }
  }
  return sum / ((2 * half + 1) * (2 * half + 1));
}

// labeled-video --draw-detections: a missing _full.pickle is named with the command that writes
// it; then each frame's sure detection is drawn where the tracks have nothing, and its unsure one
// is not.
void expect_detections_drawn(const std::string& c, const std::string& v, const std::string& dest,
                             const fs::path& el, const fs::path& without) {
  const std::string stem = el.stem().string();  // <video><scorer>_el
  const std::string base = stem.substr(0, stem.size() - 3);
  const fs::path full = el.parent_path() / (base + "_full.pickle");
  const std::string command =
      "labeled-video " + c + " " + v + dest + " --filtered --pcutoff 0.5 --draw-detections";
  const testing::CommandResult missing = testing::run_labpose(command);
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, full.string() + " does not exist")) << missing.output;
  EXPECT_TRUE(contains(missing.output, "hint: run labpose analyze")) << missing.output;

  pipeline::AnimalFileHeader header;
  header.scorer = base.substr(std::string("synthetic_mice").size());
  header.individuals = {"individual1", "individual2", "individual3"};
  header.multi_bodyparts = {"snout", "leftear", "rightear", "tailbase"};  // the network's
  header.frames = 20;
  pipeline::FullPickleWriter writer(full, header);
  for (std::int64_t i = 0; i < 20; ++i) {
    pipeline::ImageDetections detections;
    detections.candidates = {{{0, 0, 0, 200.0, 30.0, 0.9}}, {{1, 0, 0, 60.0, 200.0, 0.2}}, {}, {}};
    writer.add(i, detections);
  }
  writer.commit();
  const testing::CommandResult drawn = testing::run_labpose(command);
  ASSERT_EQ(drawn.exit_code, 0) << drawn.output;
  const fs::path with = el.parent_path() / (stem + "_filtered_full_id_p50_labeled.mp4");
  ASSERT_TRUE(fs::exists(with)) << drawn.output;
  const int width = pipeline::VideoReader(with).width();
  for (const std::int64_t frame : {3, 12}) {
    const auto a = frame_of(with, frame), b = frame_of(without, frame);
    EXPECT_GT(difference_around(a, b, width, 200, 30, 4), 20.0) << "frame " << frame;
    EXPECT_LT(difference_around(a, b, width, 60, 200, 4), 6.0) << "frame " << frame;
  }
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
  expect_detections_drawn(c, v, dest, el,
                          el.parent_path() / (stem + "_filtered_id_p50_labeled.mp4"));

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
