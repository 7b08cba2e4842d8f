// Label files: which file is read, columns checked against the config, the real project round trip.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "projects/labels.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_text;

const char* kConfig = R"(Task: t
scorer: me
date: Jan1
project_path: /p
bodyparts:
- snout
- tail
)";

TEST(Labels, ReadsTheFixedH5AndFallsBackToTheCsv) {
  const TempDir dir;
  const LabelFiles files = label_files(dir.path(), "me");
  EXPECT_EQ(files.csv.filename(), "CollectedData_me.csv");
  EXPECT_THROW(read_labels(files), Error);

  Table table = make_label_table("me", {"snout", "tail"});
  table.at(table.add_row({"labeled-data", "v", "img1.png"}), 0) = 5;
  write_table_csv(table, files.csv);
  EXPECT_EQ(read_labels(files).source, files.csv);

  write_text(files.h5, "damaged");
  const LoadedLabels loaded = read_labels(files);
  EXPECT_EQ(loaded.source, files.csv);
  ASSERT_EQ(loaded.notes.size(), 1u);
  EXPECT_NE(loaded.notes[0].find("could not read CollectedData_me.h5"), std::string::npos)
      << loaded.notes[0];

  write_labels(table, files);
  EXPECT_EQ(read_labels(files).source, files.h5);
  EXPECT_TRUE(same_table(read_labels(files).table, table));
  EXPECT_EQ(label_scorers(dir.path()), std::vector<std::string>{"me"});
}

// A CSV edited by hand and not converted, or an .h5 whose values a damaged disk changed: the .h5 is
// read, as DeepLabCut does, and a note says where the two differ.
TEST(Labels, AnH5ThatDiffersFromItsCsvIsNoted) {
  const TempDir dir;
  const LabelFiles files = label_files(dir.path(), "me");
  Table table = make_label_table("me", {"snout", "tail"});
  table.at(table.add_row({"labeled-data", "v", "img1.png"}), 0) = 5;
  table.at(table.add_row({"labeled-data", "v", "img2.png"}), 2) = 7;
  write_labels(table, files);
  EXPECT_TRUE(read_labels(files).notes.empty());

  Table edited = table;
  edited.at(1, 2) = 7.25;
  edited.at(edited.add_row({"labeled-data", "v", "img3.png"}), 1) = 1;
  write_table_csv(edited, files.csv);
  const LoadedLabels loaded = read_labels(files);
  EXPECT_EQ(loaded.source, files.h5);
  EXPECT_TRUE(same_table(loaded.table, table));
  ASSERT_EQ(loaded.notes.size(), 1u);
  EXPECT_TRUE(
      testing::contains(loaded.notes[0],
                        "CollectedData_me.h5 and CollectedData_me.csv differ (2 values; first: "
                        "v/img2.png tail x is 7 in the .h5 and 7.25 in the CSV (line 5))"))
      << loaded.notes[0];
  EXPECT_TRUE(testing::contains(loaded.notes[0], "convert-labels")) << loaded.notes[0];

  edited = table;
  edited.at(1, 2) = 7.0004;  // a CSV written with fewer decimals is the same labels
  write_table_csv(edited, files.csv);
  EXPECT_TRUE(read_labels(files).notes.empty());

  write_text(files.csv, testing::read_text(files.csv) + "labeled-data,v,img9.png,1,oops,,\n");
  const LoadedLabels broken_csv = read_labels(files);
  EXPECT_TRUE(same_table(broken_csv.table, table));
  ASSERT_EQ(broken_csv.notes.size(), 1u);
  EXPECT_TRUE(testing::contains(broken_csv.notes[0], "CollectedData_me.csv cannot be read ("))
      << broken_csv.notes[0];
  EXPECT_TRUE(testing::contains(broken_csv.notes[0], "CollectedData_me.csv:6:5: \"oops\""))
      << broken_csv.notes[0];
}

TEST(Labels, KeypointColumnsAndTheirErrors) {
  Table table = make_label_table("me", {"snout", "tail"});
  const auto keypoints = keypoint_columns(table, "f.csv");
  ASSERT_EQ(keypoints.size(), 2u);
  EXPECT_EQ(keypoints[1].bodypart, "tail");
  EXPECT_EQ(keypoints[1].x, 2u);
  EXPECT_EQ(keypoints[1].y, 3u);

  table.columns[3][2] = "z";
  EXPECT_THROW(keypoint_columns(table, "f.csv"), Error);
  table.columns[3][2] = "x";
  try {
    keypoint_columns(table, "f.csv");
    FAIL();
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("appears twice"), std::string::npos) << error.what();
  }
}

TEST(Labels, ColumnsAreCheckedAgainstTheConfig) {
  const ProjectConfig config = ProjectConfig::parse(kConfig, "/p/config.yaml");
  Table table = make_label_table("someone", {"snout", "nose"});
  const auto findings =
      check_label_columns(table, config, "/p/labeled-data/v/CollectedData_me.csv", "me");
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].severity, Finding::Severity::warning);
  EXPECT_NE(
      findings[0].message.find("the scorer row says \"someone\" but the file name says \"me\""),
      std::string::npos);
  EXPECT_EQ(findings[1].severity, Finding::Severity::error);
  EXPECT_EQ(findings[1].message,
            "/p/labeled-data/v/CollectedData_me.csv: column 6: unknown bodypart \"nose\" "
            "(config.yaml lists snout, "
            "tail)");
  EXPECT_EQ(findings[2].severity, Finding::Severity::warning);
  EXPECT_NE(findings[2].message.find("lists bodypart \"tail\" but the file has no column"),
            std::string::npos);
}

// Names from a label file reach the terminal escaped: a hand-edited header cannot clear the screen.
TEST(Labels, NamesFromTheFileArePrintedEscaped) {
  const ProjectConfig config = ProjectConfig::parse(kConfig, "/p/config.yaml");
  Table table = make_label_table("\x1b]0;x\x07me", {"snout", "\x1b[2Jnose"});
  const auto findings =
      check_label_columns(table, config, "/p/labeled-data/v/CollectedData_me.csv", "me");
  ASSERT_FALSE(findings.empty());
  for (const auto& finding : findings) {
    EXPECT_EQ(finding.message.find('\x1b'), std::string::npos) << finding.message;
    EXPECT_EQ(finding.message.find('\x07'), std::string::npos) << finding.message;
  }
  EXPECT_NE(findings[1].message.find("unknown bodypart \"\\x1b[2Jnose\""), std::string::npos)
      << findings[1].message;
}

TEST(Labels, ImageKeysFromEitherIndexStyle) {
  Table table = make_label_table("me", {"a"});
  table.add_row({"labeled-data", "m4s1", "img0001.png"});
  Table legacy = make_label_table("me", {"a"});
  legacy.index_levels = 1;
  legacy.add_row({"labeled-data\\m4s1\\img0002.png"});
  EXPECT_EQ(image_key(table, 0).image, "img0001.png");
  const ImageKey key = image_key(legacy, 0);
  EXPECT_EQ(key.folder, "labeled-data");
  EXPECT_EQ(key.stem, "m4s1");
  EXPECT_EQ(key.image, "img0002.png");
}

TEST(Labels, ReferenceProjectReadsFromTheCsvAndRoundTripsThroughH5) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const TempDir dir;
  const fs::path copy = testing::copy_openfield_project(project, dir.path());
  const LabelFiles files = label_files(copy / "labeled-data" / "m4s1", "Pranav");
  const LoadedLabels loaded = read_labels(files);
  EXPECT_EQ(loaded.source, files.csv) << "the shipped .h5 is in the old table format";
  ASSERT_EQ(loaded.notes.size(), 1u);
  EXPECT_NE(loaded.notes[0].find("old \"table\" format"), std::string::npos);
  EXPECT_EQ(loaded.table.row_count(), 116u);
  const ProjectConfig config = ProjectConfig::load(copy / "config.yaml");
  EXPECT_TRUE(check_label_columns(loaded.table, config, files.csv, "Pranav").empty());

  // CSV -> H5 -> CSV changes no value and no byte.
  const std::string original_csv = testing::read_text(files.csv);
  write_table_hdf5(loaded.table, dir / "converted.h5");
  const Table from_h5 = read_table_hdf5(dir / "converted.h5");
  EXPECT_TRUE(same_table(from_h5, loaded.table));
  EXPECT_EQ(table_to_csv(from_h5), original_csv);
}

}  // namespace
}  // namespace labpose::projects
