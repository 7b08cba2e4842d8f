// Label files changed behind the labeling server's back (a text editor on the CSV, another tool on
// the .h5) while it runs: what can be reconciled is kept, whole; what cannot stops the save with a
// message naming the file and line, and no file (nor its .bak) is overwritten.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "labeling/label_files.hpp"
#include "labeling/label_store.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/server_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using testing::contains;
using testing::read_text;
using testing::write_text;

// Every file of the folder's labels and their .bak, as bytes (absent files as "<absent>").
std::map<std::string, std::string> snapshot(const projects::LabelFiles& files) {
  std::map<std::string, std::string> bytes;
  for (const fs::path& file : {files.csv, files.h5}) {
    for (const std::string& name : {file.string(), file.string() + ".bak"})
      bytes[name] = fs::exists(name) ? read_text(name) : "<absent>";
  }
  return bytes;
}

// The names of the files whose bytes differ between two snapshots (binary .h5: not printed).
std::string changed_files(const std::map<std::string, std::string>& before,
                          const std::map<std::string, std::string>& after) {
  std::string names;
  for (const auto& [name, bytes] : after)
    if (before.count(name) == 0 || before.at(name) != bytes) names += name + " ";
  return names;
}

// The 1-based line of `text` that contains `part`.
std::size_t line_with(const std::string& text, const std::string& part) {
  const std::size_t at = text.find(part);
  EXPECT_NE(at, std::string::npos) << part;
  return 1 + static_cast<std::size_t>(
                 std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

void set_value(projects::Table& table, const std::string& image, const std::string& bodypart,
               double x, double y) {
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    if (projects::image_key(table, row).image != image) continue;
    for (std::size_t column = 0; column < table.column_count(); ++column) {
      if (table.columns[column][1] != bodypart) continue;
      table.at(row, column) = table.columns[column][2] == "x" ? x : y;
    }
  }
}

class LabelStoreHandEdits : public LabelServerTest {
 protected:
  // Two saves, so both files and their .bak exist: snout of img000 at (3, 4), leftear of img001
  // at (12.5, 20.5).
  void label_two_points() {
    start();
    post("/api/point", point_at("img000.png", "snout", 3, 4));
    post("/api/point", point_at("img001.png", "leftear", 12.5, 20.5));
  }

  // Another click, which must be refused with a message containing `parts`, and change nothing.
  void expect_refused(const std::vector<std::string>& parts) {
    const auto before = snapshot(files());
    const json answer = post("/api/point", point_at("img002.png", "tailbase", 5, 5), 409);
    for (const auto& part : parts) EXPECT_TRUE(contains(answer.value("error", ""), part)) << answer;
    EXPECT_FALSE(answer.value("hint", "").empty()) << answer;
    EXPECT_EQ(changed_files(before, snapshot(files())), "");
    // The server keeps serving.
    EXPECT_EQ(get_status("/api/project"), 200);
  }
};

TEST_F(LabelStoreHandEdits, ACsvThatNoLongerParsesIsNeverSavedOver) {
  label_two_points();
  // The user's editor: snout of img000 moved to (30, 31), and a typo in img001's row.
  projects::Table edited = projects::read_table_csv(files().csv);
  set_value(edited, "img000.png", "snout", 30, 31);
  const std::string good = projects::table_to_csv(edited);
  std::string typo = good;
  typo.replace(typo.find("20.5"), 4, "20.5x");
  write_text(files().csv, typo);
  const std::size_t line = line_with(typo, "img001.png");

  // Two clicks (the second used to lose the edit from the .bak too): both refused.
  expect_refused({fmt::format("CollectedData_Alice.csv:{}", line)});
  expect_refused({fmt::format("CollectedData_Alice.csv:{}", line)});
  EXPECT_EQ(read_text(files().csv), typo);
  // Viewing says why too, and the list of videos still comes.
  auto frame = client().Get("/api/frame?video=mouse&image=img000.png");
  ASSERT_TRUE(frame);
  EXPECT_EQ(frame->status, 409);
  EXPECT_TRUE(contains(frame->body, "CollectedData_Alice.csv"));
  const json videos = json::parse(client().Get("/api/videos")->body);
  EXPECT_TRUE(contains(videos["videos"][0].value("problem", ""), "CollectedData_Alice.csv"));

  // The typo fixed: the next click keeps the hand-moved point and adds its own.
  write_text(files().csv, good);
  post("/api/point", point_at("img002.png", "tailbase", 5, 5));
  const auto csv = projects::read_table_csv(files().csv);
  EXPECT_EQ(value(csv, "img000.png", "snout", "x"), 30.0);
  EXPECT_EQ(value(csv, "img001.png", "leftear", "x"), 12.5);
  EXPECT_EQ(value(csv, "img002.png", "tailbase", "x"), 5.0);
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(files().h5)));
}

TEST_F(LabelStoreHandEdits, ACsvEditedByHandWinsWholeOverTheOlderH5) {
  label_two_points();
  projects::Table edited = projects::read_table_csv(files().csv);
  set_value(edited, "img000.png", "snout", 30, 31);                        // moved
  set_value(edited, "img001.png", "leftear", std::nan(""), std::nan(""));  // deleted
  write_text(files().csv, projects::table_to_csv(edited));

  post("/api/point", point_at("img002.png", "tailbase", 5, 5));
  const auto csv = projects::read_table_csv(files().csv);
  EXPECT_EQ(value(csv, "img000.png", "snout", "x"), 30.0);
  EXPECT_TRUE(std::isnan(value(csv, "img001.png", "leftear", "x")));  // not brought back
  EXPECT_EQ(value(csv, "img002.png", "tailbase", "y"), 5.0);
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(files().h5)));
}

TEST_F(LabelStoreHandEdits, AnH5RewrittenByAnotherToolWinsWholeOverTheOlderCsv) {
  label_two_points();
  projects::Table rewritten = projects::read_table_hdf5(files().h5);
  set_value(rewritten, "img000.png", "snout", std::nan(""), std::nan(""));  // deleted
  set_value(rewritten, "img001.png", "leftear", 40, 41);                    // moved
  projects::write_table_hdf5(rewritten, files().h5);

  post("/api/point", point_at("img002.png", "tailbase", 5, 5));
  const auto csv = projects::read_table_csv(files().csv);
  EXPECT_TRUE(std::isnan(value(csv, "img000.png", "snout", "x")));
  EXPECT_EQ(value(csv, "img001.png", "leftear", "y"), 41.0);
  EXPECT_TRUE(projects::same_table(csv, projects::read_table_hdf5(files().h5)));
}

TEST_F(LabelStoreHandEdits, BothFilesChangedAndDisagreeingAreRefused) {
  label_two_points();
  projects::Table by_hand = projects::read_table_csv(files().csv);
  set_value(by_hand, "img000.png", "snout", 30, 31);
  const std::string text = projects::table_to_csv(by_hand);
  write_text(files().csv, text);
  projects::Table by_tool = projects::read_table_hdf5(files().h5);
  set_value(by_tool, "img000.png", "snout", 40, 41);
  projects::write_table_hdf5(by_tool, files().h5);

  expect_refused({fmt::format("CollectedData_Alice.csv:{}", line_with(text, "img000.png")),
                  "CollectedData_Alice.h5", "snout in img000.png"});
}

TEST_F(LabelStoreHandEdits, FilesOfAnotherProgramAreMergedOnlyWhereNothingIsAmbiguous) {
  // No labpose record: a .h5 and a newer CSV from which one point is gone (deleted by hand, or
  // never there?) and another moved.
  projects::Table table =
      projects::make_label_table("Alice", {"snout", "leftear", "rightear", "tailbase"});
  table.add_row({"labeled-data", "mouse", "img000.png"});
  table.add_row({"labeled-data", "mouse", "img001.png"});
  set_value(table, "img000.png", "snout", 3, 4);
  set_value(table, "img001.png", "leftear", 12.5, 20.5);
  projects::write_table_hdf5(table, files().h5);
  projects::Table newer = table;
  set_value(newer, "img000.png", "snout", 30, 31);
  set_value(newer, "img001.png", "leftear", std::nan(""), std::nan(""));
  const std::string text = projects::table_to_csv(newer);
  write_text(files().csv, text);
  fs::last_write_time(files().csv, fs::last_write_time(files().h5) + std::chrono::seconds(5));
  start();
  expect_refused({"CollectedData_Alice.h5", "leftear in img001.png",
                  fmt::format("CollectedData_Alice.csv:{}", line_with(text, "img001.png"))});

  // With the point back in the CSV, only the move differs: the newer file's point is kept.
  set_value(newer, "img001.png", "leftear", 12.5, 20.5);
  write_text(files().csv, projects::table_to_csv(newer));
  fs::last_write_time(files().csv, fs::last_write_time(files().h5) + std::chrono::seconds(5));
  post("/api/point", point_at("img002.png", "tailbase", 5, 5));
  const auto csv = projects::read_table_csv(files().csv);
  EXPECT_EQ(value(csv, "img000.png", "snout", "x"), 30.0);
  EXPECT_EQ(value(csv, "img001.png", "leftear", "x"), 12.5);
}

TEST_F(LabelStoreHandEdits, ADamagedH5IsNeverSavedOver) {
  label_two_points();
  write_text(files().h5, "this is not an HDF5 file any more");
  expect_refused({"CollectedData_Alice.h5"});
  // The hint says how to go on with the CSV.
  const json answer = post("/api/point", point_at("img002.png", "tailbase", 5, 5), 409);
  EXPECT_TRUE(contains(answer.value("hint", ""), "move the damaged CollectedData_Alice.h5"));
  // Done as the hint says: the CSV's labels are kept and the .h5 written again.
  fs::rename(files().h5, dir_.path() / "damaged.h5");
  post("/api/point", point_at("img002.png", "tailbase", 5, 5));
  const auto h5 = projects::read_table_hdf5(files().h5);
  EXPECT_EQ(value(h5, "img001.png", "leftear", "y"), 20.5);
  EXPECT_EQ(value(h5, "img002.png", "tailbase", "x"), 5.0);
}

TEST_F(LabelStoreHandEdits, AFileSavedByAnEditorDuringASaveIsNotOverwritten) {
  label_two_points();
  const std::string h5_before = read_text(files().h5);
  projects::Table edited = projects::read_table_csv(files().csv);
  set_value(edited, "img000.png", "snout", 30, 31);
  const std::string text = projects::table_to_csv(edited);
  // The editor saves after the click has read the files and before it writes them.
  server_->store().set_before_write_hook([&] { write_text(files().csv, text); });
  const json answer = post("/api/point", point_at("img002.png", "tailbase", 5, 5), 409);
  EXPECT_TRUE(contains(answer.value("error", ""), "CollectedData_Alice.csv")) << answer;
  EXPECT_EQ(read_text(files().csv), text);
  EXPECT_TRUE(read_text(files().h5) == h5_before) << "the .h5 was written";

  // The next click reads the editor's file and keeps its change.
  server_->store().set_before_write_hook({});
  post("/api/point", point_at("img002.png", "tailbase", 5, 5));
  EXPECT_EQ(value(projects::read_table_hdf5(files().h5), "img000.png", "snout", "x"), 30.0);
}

TEST(LabelStoreCsvLines, FindsTheLineOfARowInTheCsv) {
  projects::Table table = projects::make_label_table("Alice", {"snout"});
  table.add_row({"labeled-data", "mouse", "img000.png"});
  table.add_row({"labeled-data", "mouse", "img001.png"});
  const std::string text = projects::table_to_csv(table);
  EXPECT_EQ(csv_line_of(text, table, 0), 4u);
  EXPECT_EQ(csv_line_of(text, table, 1), 5u);
  EXPECT_EQ(csv_line_of(text, table, 2), 0u);
  // CRLF line ends (a Windows editor) do not change the count.
  std::string windows;
  for (const char c : text) {
    if (c == '\n')
      windows += "\r\n";
    else
      windows += c;
  }
  EXPECT_EQ(csv_line_of(windows + "\r\n", table, 1), 5u);
}

}  // namespace
}  // namespace labpose::labeling
