// The labeling server on DeepLabCut's multi-animal example (blank frames in place of its images):
// points named by individual and bodypart, placed, moved, deleted and given to another individual,
// in files with DeepLabCut's four header rows and column order; the same promises as for
// single-animal files (backups, merges, refusals, other scorers, --refine).
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>

#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/labeling/server_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

// Keypoint numbers of the example in DeepLabCut's column order.
constexpr std::size_t kFirstBodypart1 = 0, kSecondBodypart1 = 3, kSecondBodypart2 = 4,
                      kThirdBodypart2 = 7, kCorner1 = 9, kCorner2 = 10;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// One keypoint's value in a multi-animal label table, NaN when the row or column is missing.
double value(const projects::Table& table, const std::string& image, const std::string& individual,
             const std::string& bodypart, const std::string& coord) {
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    if (projects::image_key(table, row).image != image) continue;
    for (std::size_t column = 0; column < table.column_count(); ++column) {
      const auto& name = table.columns[column];
      if (name[1] == individual && name[2] == bodypart && name[3] == coord)
        return table.at(row, column);
    }
  }
  return std::nan("");
}

json point(const std::string& video, const std::string& image, const std::string& individual,
           const std::string& bodypart) {
  return {{"video", video}, {"image", image}, {"individual", individual}, {"bodypart", bodypart}};
}

json point(const std::string& image, const std::string& individual, const std::string& bodypart,
           double x, double y) {
  json body = point("m3v1mp4short", image, individual, bodypart);
  body["x"] = x;
  body["y"] = y;
  return body;
}

class MultiAnimalTest : public LabelServerTest {
 protected:
  void SetUp() override {
    config_file_ = testing::copy_multi_animal_example(
        dir_.path(),
        {"img00.png", "img26.png", "img11.png", "img17.png", "img12.png", "img05.png"});
    original_ = testing::read_text(short_files().csv);
  }
  fs::path labeled(const std::string& video) const {
    return config_file_.parent_path() / "labeled-data" / video;
  }
  projects::LabelFiles short_files(const std::string& scorer = "dlc_team") const {
    return projects::label_files(labeled("m3v1mp4short"), scorer);
  }
  projects::Table short_csv() const { return projects::read_table_csv(short_files().csv); }

  std::string original_;  // the example's CSV of m3v1mp4short
};

TEST_F(MultiAnimalTest, ServesIndividualsColouredAsCheckLabelsDrawsThem) {
  start();
  const json project = json::parse(client().Get("/api/project")->body);
  EXPECT_EQ(project["multi_animal"], true);
  EXPECT_EQ(project["individuals"], json({"individual1", "individual2", "individual3", "single"}));
  ASSERT_EQ(project["keypoints"].size(), 11u);
  EXPECT_EQ(project["keypoints"][kSecondBodypart2],
            json({{"individual", "individual2"}, {"bodypart", "bodypart2"}}));
  EXPECT_EQ(project["keypoints"][kCorner2],
            json({{"individual", "single"}, {"bodypart", "corner2"}}));
  // One colour per individual (rainbow over four: single is the fourth), as check-labels.
  const json& colors = project["colors"];
  EXPECT_EQ(colors[0], colors[2]);
  EXPECT_NE(colors[0], colors[kSecondBodypart1]);
  EXPECT_EQ(colors[kCorner1], project["individual_colors"][3]);
  EXPECT_EQ(project["individual_colors"][0], "#8000ff");
  EXPECT_EQ(project["individual_colors"][3], "#ff0000");

  // The frame list counts the points of every individual.
  const json videos = json::parse(client().Get("/api/videos")->body)["videos"];
  ASSERT_EQ(videos.size(), 2u);
  const json& frames = videos[1]["frames"];  // m3v1mp4short, images sorted by name
  ASSERT_EQ(frames.size(), 6u);
  EXPECT_EQ(frames[0]["image"], "img00.png");
  EXPECT_EQ(frames[0]["labeled"], 0);
  EXPECT_EQ(frames[1]["labeled"], 2);   // img05: the corners only
  EXPECT_EQ(frames[2]["labeled"], 8);   // img11: no individual2
  EXPECT_EQ(frames[5]["labeled"], 11);  // img26: every keypoint
}

TEST_F(MultiAnimalTest, EditsKeepDeepLabCutsHeaderRowsColumnOrderAndBackups) {
  start();
  // individual2 has no points in img11: place its bodypart1, then move it.
  json frame = post("/api/point", point("img11.png", "individual2", "bodypart1", 300.5, 200.25));
  EXPECT_EQ(frame["points"][kSecondBodypart1], json({{"x", 300.5}, {"y", 200.25}}));
  EXPECT_EQ(frame["points"][kFirstBodypart1], json({{"x", 91.092}, {"y", 101.305}}));
  EXPECT_TRUE(frame["points"][kSecondBodypart2].is_null());
  post("/api/point", point("img11.png", "individual2", "bodypart1", 310, 210));
  // A new row for an unlabeled frame: single's corner2.
  post("/api/point", point("img00.png", "single", "corner2", 5, 6));

  const auto csv = short_csv();
  EXPECT_EQ(value(csv, "img11.png", "individual2", "bodypart1", "x"), 310.0);
  EXPECT_EQ(value(csv, "img11.png", "individual2", "bodypart1", "y"), 210.0);
  EXPECT_EQ(value(csv, "img00.png", "single", "corner2", "y"), 6.0);
  EXPECT_TRUE(std::isnan(value(csv, "img00.png", "individual1", "bodypart1", "x")));
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(short_files().h5)));
  const auto written = lines_of(testing::read_text(short_files().csv));
  const auto example = lines_of(original_);
  ASSERT_GT(written.size(), 4u);
  for (std::size_t line = 0; line < 4; ++line) EXPECT_EQ(written[line], example[line]) << line;
  // The example as it was, in the session's backup; the previous version beside the file.
  const fs::path backup = server_->store().session_backup_dir("m3v1mp4short");
  EXPECT_EQ(testing::read_text(backup / "CollectedData_dlc_team.csv"), original_);
  EXPECT_TRUE(fs::exists(short_files().csv.string() + ".bak"));
  EXPECT_TRUE(fs::exists(short_files().h5.string() + ".bak"));

  // Deleted again: every row of the example comes back byte for byte, values and column order.
  frame = post("/api/delete", point("m3v1mp4short", "img11.png", "individual2", "bodypart1"));
  EXPECT_TRUE(frame["points"][kSecondBodypart1].is_null());
  post("/api/delete", point("m3v1mp4short", "img00.png", "single", "corner2"));
  auto lines = lines_of(testing::read_text(short_files().csv));
  ASSERT_EQ(lines.size(), example.size() + 1);
  EXPECT_EQ(lines[4], "labeled-data,m3v1mp4short,img00.png" + std::string(22, ','));
  lines.erase(lines.begin() + 4);
  EXPECT_EQ(lines, example);
}

TEST_F(MultiAnimalTest, ANewFileHasDeepLabCutsFourHeaderRowsAndColumnOrder) {
  fs::create_directories(labeled("m3v1mp4new"));
  fs::copy_file(labeled("m3v1mp4short") / "img00.png", labeled("m3v1mp4new") / "img00.png");
  start();
  post("/api/point", {{"video", "m3v1mp4new"},
                      {"image", "img00.png"},
                      {"individual", "individual3"},
                      {"bodypart", "bodypart2"},
                      {"x", 12.5},
                      {"y", 30}});
  const auto files = projects::label_files(labeled("m3v1mp4new"), "dlc_team");
  const auto lines = lines_of(testing::read_text(files.csv));
  const auto example = lines_of(original_);
  ASSERT_EQ(lines.size(), 5u);
  for (std::size_t line = 0; line < 4; ++line) EXPECT_EQ(lines[line], example[line]) << line;
  // individual3's bodypart2 is the eighth keypoint: columns 15 and 16 of 22.
  EXPECT_EQ(lines[4], "labeled-data,m3v1mp4new,img00.png" + std::string(15, ',') + "12.5,30.0" +
                          std::string(6, ','));
  EXPECT_TRUE(projects::same_table(projects::read_table_csv(files.csv),
                                   projects::read_table_hdf5(files.h5)));
}

TEST_F(MultiAnimalTest, MovesAPointToAnotherIndividualUnlessItHasThatBodypart) {
  start();
  // individual1's bodypart1 in img11 becomes individual2's (who has no points there).
  json move = point("m3v1mp4short", "img11.png", "individual1", "bodypart1");
  move["to"] = "individual2";
  json frame = post("/api/individual", move);
  EXPECT_TRUE(frame["points"][kFirstBodypart1].is_null());
  EXPECT_EQ(frame["points"][kSecondBodypart1], json({{"x", 91.092}, {"y", 101.305}}));
  auto csv = short_csv();
  EXPECT_TRUE(std::isnan(value(csv, "img11.png", "individual1", "bodypart1", "x")));
  EXPECT_EQ(value(csv, "img11.png", "individual2", "bodypart1", "y"), 101.305);

  // individual3 has a bodypart2 in img11: refused with the reason, nothing written.
  const std::string before = testing::read_text(short_files().csv);
  json taken = point("m3v1mp4short", "img11.png", "individual1", "bodypart2");
  taken["to"] = "individual3";
  const json refused = post("/api/individual", taken, 409);
  EXPECT_TRUE(testing::contains(refused["error"],
                                "individual3's bodypart2 already has a point in "
                                "img11.png (at 105.472, 96.161)"))
      << refused.dump();
  // No corner1 for individual1, no such individual, the same individual, no point to move.
  json corner = point("m3v1mp4short", "img11.png", "single", "corner1");
  corner["to"] = "individual1";
  post("/api/individual", corner, 404);
  taken["to"] = "individual9";
  post("/api/individual", taken, 404);
  taken["to"] = "individual1";
  post("/api/individual", taken, 400);
  json absent = point("m3v1mp4short", "img11.png", "individual2", "bodypart2");
  absent["to"] = "individual1";
  post("/api/individual", absent, 409);
  EXPECT_EQ(testing::read_text(short_files().csv), before);

  // And back, as the page's undo does.
  move = point("m3v1mp4short", "img11.png", "individual2", "bodypart1");
  move["to"] = "individual1";
  post("/api/individual", move);
  EXPECT_EQ(testing::read_text(short_files().csv), original_);
}

TEST_F(MultiAnimalTest, RefusesPointsWithoutAKnownIndividual) {
  start();
  json body = point("img00.png", "individual1", "bodypart1", 5, 6);
  body.erase("individual");
  const json answer = post("/api/point", body, 400);
  EXPECT_TRUE(testing::contains(answer["error"], "\"individual\"")) << answer.dump();
  post("/api/point", point("img00.png", "individual9", "bodypart1", 5, 6), 404);
  post("/api/point", point("img00.png", "single", "bodypart1", 5, 6), 404);
  post("/api/point", point("img00.png", "individual1", "corner1", 5, 6), 404);
  post("/api/delete", point("m3v1mp4short", "img26.png", "", "bodypart1"), 400);
  EXPECT_EQ(testing::read_text(short_files().csv), original_);
}

TEST_F(MultiAnimalTest, KeepsUnknownIndividualsAndMergesTheNewerFile) {
  // Another tool added an individual the config does not list, and moved a point in the .h5 only.
  projects::Table table = short_csv();
  for (const char* coord : {"x", "y"})
    table.columns.push_back({"dlc_team", "intruder", "nose", coord});
  std::vector<double> values;
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const auto first = table.values.begin() + static_cast<std::ptrdiff_t>(row * 22);
    values.insert(values.end(), first, first + 22);
    values.push_back(row == 0 ? 1.5 : std::nan(""));
    values.push_back(row == 0 ? 2.5 : std::nan(""));
  }
  table.values = values;
  projects::write_table_csv(table, short_files().csv);
  projects::Table moved = table;
  moved.at(0, 12) = 77.0;  // img26, individual3's bodypart1 x
  projects::write_table_hdf5(moved, short_files().h5);
  fs::last_write_time(short_files().h5,
                      fs::last_write_time(short_files().csv) + std::chrono::seconds(5));
  start();
  post("/api/point", point("img00.png", "individual1", "bodypart3", 40, 50));
  const auto csv = short_csv();
  EXPECT_EQ(value(csv, "img26.png", "intruder", "nose", "x"), 1.5);
  EXPECT_EQ(value(csv, "img26.png", "individual3", "bodypart1", "x"), 77.0);
  EXPECT_EQ(value(csv, "img00.png", "individual1", "bodypart3", "y"), 50.0);
  EXPECT_EQ(csv.columns.back(), (std::vector<std::string>{"dlc_team", "intruder", "nose", "y"}));
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(short_files().h5)));
}

TEST_F(MultiAnimalTest, RefusesWhenTheOlderFileHasAPointTheNewerLacks) {
  projects::Table table = short_csv();
  table.at(0, 10) = std::nan("");  // img26, individual2's bodypart3, deleted in the .h5 only?
  table.at(0, 11) = std::nan("");
  projects::write_table_hdf5(table, short_files().h5);
  fs::last_write_time(short_files().h5,
                      fs::last_write_time(short_files().csv) + std::chrono::seconds(5));
  start();
  const json answer = post("/api/point", point("img00.png", "individual1", "bodypart1", 5, 6), 409);
  EXPECT_TRUE(testing::contains(answer["error"],
                                "CollectedData_dlc_team.csv:5 has "
                                "individual2's bodypart3 in img26.png"))
      << answer.dump();
  EXPECT_EQ(testing::read_text(short_files().csv), original_);
}

TEST_F(MultiAnimalTest, RefusesSingleAnimalLabelsInAMultiAnimalProject) {
  projects::Table table = projects::make_label_table("dlc_team", {"bodypart1"});
  table.add_row({"labeled-data", "m3v1mp4short", "img00.png"});
  projects::write_labels(table, short_files());
  const std::string before = testing::read_text(short_files().csv);
  start();
  const json answer = post("/api/point", point("img00.png", "individual1", "bodypart1", 5, 6), 409);
  EXPECT_TRUE(testing::contains(answer["error"], "single-animal columns in a multi-animal project"))
      << answer.dump();
  EXPECT_EQ(testing::read_text(short_files().csv), before);
}

TEST_F(MultiAnimalTest, MergesAnotherScorersLabelsOnce) {
  projects::Table theirs = projects::make_multi_animal_label_table(
      "Bob", {"individual1", "individual2"}, {"bodypart1"}, {"corner1"});
  theirs.add_row({"labeled-data", "m3v1mp4short", "img00.png"});
  theirs.add_row({"labeled-data", "m3v1mp4short", "img26.png"});
  theirs.at(0, 2) = 5;  // img00: individual2's bodypart1
  theirs.at(0, 3) = 6;
  theirs.at(1, 0) = 1;  // img26: individual1's bodypart1, which dlc_team labeled already
  theirs.at(1, 1) = 1;
  projects::write_labels(theirs, short_files("Bob"));
  start();
  const auto notes = server_->store().merge_other_scorers();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].points, 1u);
  auto ours = short_csv();
  EXPECT_EQ(value(ours, "img00.png", "individual2", "bodypart1", "x"), 5.0);
  EXPECT_EQ(value(ours, "img26.png", "individual1", "bodypart1", "x"), 104.605);
  EXPECT_EQ(ours.columns.front().front(), "dlc_team");

  post("/api/delete", point("m3v1mp4short", "img00.png", "individual2", "bodypart1"));
  server_.reset();
  start();
  EXPECT_TRUE(server_->store().merge_other_scorers().empty());
  EXPECT_TRUE(std::isnan(value(short_csv(), "img00.png", "individual2", "bodypart1", "x")));
}

TEST_F(MultiAnimalTest, RefineShowsAndAcceptsEachIndividualsPredictions) {
  projects::Table machine;
  machine.column_level_names = {"scorer", "individuals", "bodyparts", "coords"};
  for (const auto& [individual, bodypart] : {std::pair{"individual1", "bodypart1"},
                                             {"individual2", "bodypart2"},
                                             {"single", "corner1"}}) {
    for (const char* coord : {"x", "y", "likelihood"})
      machine.columns.push_back(
          {"DLC_dlcrnetms5_multi_mouseApr12shuffle1_1000", individual, bodypart, coord});
  }
  machine.index_levels = 3;
  machine.add_row({"labeled-data", "m3v1mp4short", "img00.png"});
  machine.values = {10, 20, 0.9, 30, 40, 0.8, 50, 60, 0.7};
  projects::write_table_hdf5(machine, labeled("m3v1mp4short") / "machinelabels-iter0.h5");
  start(true);
  json frame = json::parse(client().Get("/api/frame?video=m3v1mp4short&image=img00.png")->body);
  EXPECT_EQ(frame["machine"][kSecondBodypart2],
            json({{"x", 30.0}, {"y", 40.0}, {"likelihood", 0.8}}));
  EXPECT_TRUE(frame["machine"][kSecondBodypart1].is_null());
  frame = post("/api/accept", {{"video", "m3v1mp4short"}, {"image", "img00.png"}});
  EXPECT_EQ(frame["points"][kFirstBodypart1], json({{"x", 10.0}, {"y", 20.0}}));
  EXPECT_EQ(frame["points"][kCorner1], json({{"x", 50.0}, {"y", 60.0}}));
  const auto csv = short_csv();
  EXPECT_EQ(value(csv, "img00.png", "individual2", "bodypart2", "y"), 40.0);
  EXPECT_EQ(csv.column_count(), 22u);
}

}  // namespace
}  // namespace labpose::labeling
