// DeepLabCut's CSV tables: both index styles, byte-exact writing, clear errors.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "projects/labels.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {

const char* kLegacy =
    "scorer,Pranav,Pranav,Pranav,Pranav\n"
    "bodyparts,snout,snout,leftear,leftear\n"
    "coords,x,y,x,y\n"
    "labeled-data/m4s1/img0000.png,21.521,265.428,33.819,265.941\n"
    "labeled-data/m4s1/img0001.png,10.248,288.487,,\n";

const char* kThreeIndex =
    "scorer,,,Pranav,Pranav,Pranav,Pranav\n"
    "bodyparts,,,snout,snout,leftear,leftear\n"
    "coords,,,x,y,x,y\n"
    "labeled-data,m4s1,img0000.png,21.521,265.428,33.819,265.941\n"
    "labeled-data,m4s1,img0001.png,10.248,288.487,,\n";

std::string error_of(const std::string& text) {
  return testing::error_text([&] { parse_table_csv(text, "CollectedData_Pranav.csv"); });
}

TEST(TableCsv, ReadsTheLegacyOnePathIndex) {
  const Table table = parse_table_csv(kLegacy, "x.csv");
  EXPECT_EQ(table.column_level_names, (std::vector<std::string>{"scorer", "bodyparts", "coords"}));
  EXPECT_EQ(table.index_levels, 1u);
  ASSERT_EQ(table.row_count(), 2u);
  ASSERT_EQ(table.column_count(), 4u);
  EXPECT_EQ(table.columns[2], (std::vector<std::string>{"Pranav", "leftear", "x"}));
  EXPECT_EQ(table.row_path(1), "labeled-data/m4s1/img0001.png");
  EXPECT_DOUBLE_EQ(table.at(0, 1), 265.428);
  EXPECT_TRUE(std::isnan(table.at(1, 2)));
  EXPECT_FALSE(table.integer_index);
}

TEST(TableCsv, ReadsTheThreeColumnIndex) {
  const Table table = parse_table_csv(kThreeIndex, "x.csv");
  EXPECT_EQ(table.index_levels, 3u);
  EXPECT_EQ(table.index[1], (std::vector<std::string>{"labeled-data", "m4s1", "img0001.png"}));
  EXPECT_DOUBLE_EQ(table.at(1, 0), 10.248);
}

TEST(TableCsv, WritesBackByteForByte) {
  EXPECT_EQ(table_to_csv(parse_table_csv(kLegacy, "x.csv")), kLegacy);
  EXPECT_EQ(table_to_csv(parse_table_csv(kThreeIndex, "x.csv")), kThreeIndex);
}

TEST(TableCsv, WindowsLineEndingsBomAndQuotes) {
  const std::string text =
      "\xEF\xBB\xBFscorer,Pranav,Pranav\r\nbodyparts,snout,snout\r\ncoords,x,y\r\n\"labeled-data/"
      "a,b/img1.png\",1.5,2\r\n";
  const Table table = parse_table_csv(text, "x.csv");
  ASSERT_EQ(table.row_count(), 1u);
  EXPECT_EQ(table.index[0][0], "labeled-data/a,b/img1.png");
  EXPECT_EQ(table_to_csv(table),
            "scorer,Pranav,Pranav\nbodyparts,snout,snout\ncoords,x,y\n\"labeled-data/a,b/"
            "img1.png\",1.5,2.0\n");
}

TEST(TableCsv, IntegerIndexIsRecognised) {
  const Table table = parse_table_csv(
      "scorer,DLC_x,DLC_x,DLC_x\nbodyparts,snout,snout,snout\ncoords,x,y,likelihood\n0,1.0,2.0,0."
      "9\n1,1.5,2.5,0.8\n",
      "x.csv");
  EXPECT_TRUE(table.integer_index);
}

TEST(TableCsvErrors, RaggedRowNamesTheLine) {
  const std::string message =
      error_of(std::string(kLegacy) + "labeled-data/m4s1/img0002.png,1,2,3\n");
  EXPECT_EQ(message.find("CollectedData_Pranav.csv:6: this row has 4 cells but the header has 5"),
            0u)
      << message;
}

TEST(TableCsvErrors, TextWhereANumberBelongs) {
  const std::string message =
      error_of("scorer,P,P\nbodyparts,snout,snout\ncoords,x,y\nimg.png,12px,3\n");
  EXPECT_EQ(message.find("CollectedData_Pranav.csv:4:2: \"12px\" is not a number (column snout x)"),
            0u)
      << message;
}

TEST(TableCsvErrors, NotALabelFile) {
  EXPECT_NE(error_of("frame,x,y\n0,1,2\n").find("the first line must start with \"scorer\""),
            std::string::npos);
  EXPECT_NE(error_of("").find("is empty"), std::string::npos);
  EXPECT_NE(error_of("scorer,P,P\nbodyparts,a\ncoords,x,y\n")
                .find("header line \"bodyparts\" has 2 cells"),
            std::string::npos);
  EXPECT_NE(
      error_of("scorer,P,P\nbodyparts,a,a\ncoords,x,y\n\"unterminated,1,2\n").find("never closed"),
      std::string::npos);
}

TEST(TableCsv, RealProjectRoundTripsExactly) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const auto file = project / "labeled-data" / "m4s1" / "CollectedData_Pranav.csv";
  const std::string original = testing::read_text(file);
  const Table table = read_table_csv(file);
  EXPECT_EQ(table.row_count(), 116u);
  EXPECT_EQ(table.column_count(), 8u);
  EXPECT_EQ(table_to_csv(table), original);
}

// analyze's streamed CSV on a full disk: the reason and the folder, and the old file kept.
TEST(TableCsv, StreamedTableOnAFullDiskNamesThePlace) {
  LABPOSE_REQUIRE_SMALL_DISK(disk, std::size_t{256} * 1024);
  const std::filesystem::path file = disk / "tracks.csv";
  Table header = make_label_table("me", {"snout"});
  const RowSource rows = [](std::size_t first, std::size_t count, double* out) {
    for (std::size_t i = 0; i < count * 2; ++i) out[i] = static_cast<double>(first) + 0.25;
  };
  write_frames_table_csv(header, 10, rows, file);
  const std::string before = testing::read_text(file);
  disk.fill();
  try {
    write_frames_table_csv(header, 100000, rows, file);
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_TRUE(testing::contains(error.what(), "no space left on " + disk.path().string()))
        << error.what();
    EXPECT_TRUE(testing::contains(error.hint(), "the previous file is unchanged")) << error.hint();
  }
  EXPECT_EQ(testing::read_text(file), before);
}

}  // namespace
}  // namespace labpose::projects
