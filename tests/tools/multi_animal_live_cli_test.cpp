// labpose live on a multi-animal project: each frame's animals assembled and linked by the
// project's tracker, one row per animal tracked with its track id, and those rows are the
// tracklets `labpose track` makes of the same video (ellipse and box), since live runs the same
// assembly and tracker frame by frame, without stitching. Options of single-animal models are
// usage errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/analysis/tracklet_files.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"
#include "tests/tools/trained_mice.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;

constexpr std::size_t kBodyparts = 4;  // the demo mice's: snout, ears, tail base

// The rows of live's CSV, read as DeepLabCut's tables are: (track id, frame) -> x, y, likelihood
// of each bodypart. Frames without an animal (an empty track) are left out.
std::map<std::pair<int, int>, std::vector<double>> live_rows(const fs::path& csv) {
  const projects::Table table = projects::read_table_csv(csv);
  EXPECT_EQ(table.column_level_names, (std::vector<std::string>{"scorer", "bodyparts", "coords"}));
  EXPECT_EQ(table.column_count(), 1U + 3U * kBodyparts + 2U);
  EXPECT_EQ(table.columns.front()[1], "track");
  std::map<std::pair<int, int>, std::vector<double>> rows;
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const double track = table.at(row, 0);
    if (std::isnan(track)) continue;
    std::vector<double> values;
    for (std::size_t c = 1; c < 1 + 3 * kBodyparts; ++c) values.push_back(table.at(row, c));
    rows[{static_cast<int>(track), std::stoi(table.index[row][0])}] = values;
  }
  return rows;
}

// The file in `folder` whose name ends in `suffix`.
fs::path file_ending(const fs::path& folder, const std::string& suffix) {
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
      return entry.path();
  }
  ADD_FAILURE() << "no *" << suffix << " in " << folder;
  return {};
}

TEST(MultiAnimalLiveCli, EachFramesAnimalsAreTheTrackletsOfTrack) {
  const testing::TempDir dir;
  const fs::path config = testing::trained_mice(dir.path() / "mice", 30);
  const std::string c = shell_quote(config.string());
  const std::string v = testing::mice_video(config);
  const fs::path out = dir.path() / "out";
  const std::string dest = " --dest " + shell_quote(out.string());
  const testing::CommandResult analyzed =
      testing::run_labpose("--quiet analyze " + c + " " + v + " --no-track" + dest);
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.output;

  for (const std::string tracker : {"ellipse", "box"}) {
    const std::string code = tracker == "box" ? "_bx" : "_el";
    const testing::CommandResult tracked =
        testing::run_labpose("--quiet track " + c + " " + v + dest + " --tracker " + tracker);
    ASSERT_EQ(tracked.exit_code, 0) << tracked.output;
    const pipeline::Tracklets tracklets = pipeline::read_tracklets_pickle(
        file_ending(out, code + ".pickle"), static_cast<int>(kBodyparts), 0);

    const fs::path csv = dir.path() / ("live" + code + ".csv");
    const testing::CommandResult live = testing::run_labpose(
        "live --model " + c + " --video " + v + " --output " + shell_quote(csv.string()) +
        (tracker == "box" ? " --tracker box" : ""));
    ASSERT_EQ(live.exit_code, 0) << live.output;
    EXPECT_TRUE(contains(live.output, "several animals, " + tracker + " tracker")) << live.output;
    EXPECT_TRUE(contains(live.output, "live: 30 frames, latency p50 ")) << live.output;
    EXPECT_TRUE(contains(live.output, "tracked (" + tracker + " tracker, no stitching): "))
        << live.output;
    EXPECT_TRUE(contains(live.output, "(of the animals tracked): snout ")) << live.output;

    const auto rows = live_rows(csv);
    std::size_t entries = 0;
    for (const auto& [id, tracklet] : tracklets.by_id) {
      for (const auto& [frame, animal] : tracklet) {
        ++entries;
        const auto row = rows.find({id, frame});
        ASSERT_NE(row, rows.end()) << tracker << ": tracklet " << id << " frame " << frame;
        for (std::size_t j = 0; j < kBodyparts; ++j) {
          const auto& k = animal.keypoints[j];
          const double* live_k = row->second.data() + 3 * j;
          if (std::isnan(k.x)) {
            EXPECT_TRUE(std::isnan(live_k[0])) << tracker << " " << id << " " << frame;
            continue;
          }
          EXPECT_NEAR(live_k[0], k.x, 1e-3) << tracker << " " << id << " " << frame << " " << j;
          EXPECT_NEAR(live_k[1], k.y, 1e-3) << tracker << " " << id << " " << frame << " " << j;
          EXPECT_NEAR(live_k[2], k.likelihood, 1e-4) << tracker << " " << id << " " << frame;
        }
      }
    }
    EXPECT_EQ(rows.size(), entries) << tracker << ": live tracked what track tracked, no more";
    EXPECT_GE(entries, 30U) << tracker << ": too few animals tracked to compare";
  }

  for (const auto& [option, message] : std::vector<std::pair<std::string, std::string>>{
           {"--precision int8", "--precision int8 is for single-animal projects"},
           {"--tracker skeleton", "--tracker skeleton is not a tracker"}}) {
    const testing::CommandResult refused =
        testing::run_labpose("live --model " + c + " --video " + v + " " + option);
    EXPECT_EQ(refused.exit_code, 2) << option << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, message)) << refused.output;
  }
}

}  // namespace
}  // namespace labpose
