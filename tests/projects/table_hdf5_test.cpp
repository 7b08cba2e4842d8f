// pandas' HDF5 fixed format: round trips, pandas reading our files and us reading pandas' files,
// the old table format recognised, damaged files refused with clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "core/error.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::run;
using testing::shell_quote;
using testing::TempDir;

Table sample_table(std::size_t rows, bool three_level_index) {
  Table table;
  table.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const char* bodypart : {"snout", "leftear", "rightear", "tailbase", "müs"}) {
    table.columns.push_back({"Pranav", bodypart, "x"});
    table.columns.push_back({"Pranav", bodypart, "y"});
  }
  table.index_levels = three_level_index ? 3 : 1;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::string image = "img" + std::to_string(1000 + r) + ".png";
    const std::size_t row =
        table.add_row(three_level_index ? std::vector<std::string>{"labeled-data", "m4s1", image}
                                        : std::vector<std::string>{"labeled-data/m4s1/" + image});
    for (std::size_t c = 0; c < table.column_count(); ++c) {
      if ((r + c) % 7 != 3) table.at(row, c) = 0.1 * static_cast<double>(r * 31 + c) + 1.0 / 3.0;
    }
  }
  return table;
}

std::string python_script() {
  return shell_quote((testing::python_scripts_dir() / "pandas_tables.py").string());
}

TEST(TableHdf5, RoundTripsBothIndexStyles) {
  const TempDir dir;
  for (const bool three : {true, false}) {
    const Table table = sample_table(200, three);  // > 127 rows: int16 codes
    write_table_hdf5(table, dir / "t.h5");
    EXPECT_EQ(probe_table_hdf5(dir / "t.h5"), Hdf5Format::fixed);
    const Table back = read_table_hdf5(dir / "t.h5");
    EXPECT_TRUE(same_table(back, table));
    EXPECT_EQ(back.column_level_names, table.column_level_names);
    EXPECT_EQ(back.index_levels, table.index_levels);
  }
}

TEST(TableHdf5, RoundTripsIntegerIndexAndEmptyTables) {
  const TempDir dir;
  Table frames;
  frames.column_level_names = {"scorer", "bodyparts", "coords"};
  frames.columns = {
      {"DLC_net", "snout", "x"}, {"DLC_net", "snout", "y"}, {"DLC_net", "snout", "likelihood"}};
  frames.integer_index = true;
  for (int i = 0; i < 5; ++i) {
    const auto row = frames.add_row({std::to_string(i)});
    frames.at(row, 0) = i * 1.5;
  }
  write_table_hdf5(frames, dir / "frames.h5");
  const Table back = read_table_hdf5(dir / "frames.h5");
  EXPECT_TRUE(back.integer_index);
  EXPECT_TRUE(same_table(back, frames));

  const Table empty = sample_table(0, true);
  write_table_hdf5(empty, dir / "empty.h5");
  const Table empty_back = read_table_hdf5(dir / "empty.h5");
  EXPECT_EQ(empty_back.row_count(), 0u);
  EXPECT_EQ(empty_back.columns, empty.columns);
}

TEST(TableHdf5Interop, PandasReadsOurFileExactly) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  for (const bool three : {true, false}) {
    const Table table = sample_table(150, three);
    write_table_hdf5(table, dir / "ours.h5");
    const auto result = run(shell_quote(python) + " " + python_script() + " to-csv " +
                            shell_quote((dir / "ours.h5").string()) + " " +
                            shell_quote((dir / "pandas.csv").string()));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    // pandas' own to_csv of what it read must be byte-identical to our CSV of the same table.
    EXPECT_EQ(testing::read_text(dir / "pandas.csv"), table_to_csv(table));
  }
  const auto describe = run(shell_quote(python) + " " + python_script() + " describe " +
                            shell_quote((dir / "ours.h5").string()));
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  EXPECT_NE(describe.output.find("columns.names ['scorer', 'bodyparts', 'coords']"),
            std::string::npos)
      << describe.output;
  EXPECT_NE(describe.output.find("index.names [None]"), std::string::npos) << describe.output;
  EXPECT_NE(describe.output.find("dtypes ['float64']"), std::string::npos) << describe.output;
}

TEST(TableHdf5Interop, PandasReadsOurEmptyAndIntegerIndexedFiles) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  const Table empty = sample_table(0, true);
  write_table_hdf5(empty, dir / "empty.h5");
  const auto result = run(shell_quote(python) + " " + python_script() + " describe " +
                          shell_quote((dir / "empty.h5").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("shape (0, 10)"), std::string::npos) << result.output;
}

TEST(TableHdf5Interop, WeReadWhatPandasWrites) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  for (const bool three : {true, false}) {
    const Table table = sample_table(40, three);
    write_table_csv(table, dir / "in.csv");
    const auto result =
        run(shell_quote(python) + " " + python_script() + " from-csv " +
            shell_quote((dir / "in.csv").string()) + " " +
            shell_quote((dir / "pandas.h5").string()) + " fixed " + (three ? "3" : "1"));
    ASSERT_EQ(result.exit_code, 0) << result.output;
    const Table back = read_table_hdf5(dir / "pandas.h5");
    EXPECT_TRUE(same_table(back, table)) << table_to_csv(back);
  }
}

TEST(TableHdf5Interop, TheOldTableFormatIsRecognisedAndExplained) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  write_table_csv(sample_table(5, false), dir / "in.csv");
  const auto result = run(shell_quote(python) + " " + python_script() + " from-csv " +
                          shell_quote((dir / "in.csv").string()) + " " +
                          shell_quote((dir / "table.h5").string()) + " table 1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(probe_table_hdf5(dir / "table.h5"), Hdf5Format::table);
  try {
    read_table_hdf5(dir / "table.h5");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("pandas' \"table\" format"), std::string::npos)
        << error.what();
    EXPECT_NE(error.hint().find("CSV beside it"), std::string::npos) << error.hint();
  }
}

TEST(TableHdf5, TheReferenceProjectsFileIsTheOldTableFormat) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  EXPECT_EQ(probe_table_hdf5(project / "labeled-data" / "m4s1" / "CollectedData_Pranav.h5"),
            Hdf5Format::table);
}

std::string error_of(const fs::path& file, const std::string& key = {}) {
  return testing::error_text([&] { read_table_hdf5(file, key); });
}

TEST(TableHdf5Errors, DamagedFilesAreRefusedWithTheirName) {
  const TempDir dir;
  write_table_hdf5(sample_table(50, true), dir / "good.h5");
  const std::string good = testing::read_text(dir / "good.h5");
  testing::write_text(dir / "truncated.h5", good.substr(0, good.size() / 2));
  testing::write_text(dir / "empty.h5", "");
  testing::write_text(dir / "text.h5", "scorer,a,b\n");
  EXPECT_NE(error_of(dir / "truncated.h5").find("truncated.h5"), std::string::npos);
  EXPECT_NE(error_of(dir / "empty.h5").find("is empty (0 bytes)"), std::string::npos);
  EXPECT_NE(error_of(dir / "text.h5").find("is not an HDF5 file"), std::string::npos);
  EXPECT_NE(error_of(dir / "missing.h5").find("does not exist"), std::string::npos);
  EXPECT_NE(error_of(dir / "good.h5", "keypoints").find("has no table under the key 'keypoints'"),
            std::string::npos);
}

TEST(TableHdf5Errors, FailedWriteLeavesThePreviousFile) {
  const TempDir dir;
  write_table_hdf5(sample_table(3, true), dir / "labels.h5");
  Table broken = sample_table(3, true);
  broken.values.pop_back();  // a programming error: the values do not fill the table
  EXPECT_THROW(write_table_hdf5(broken, dir / "labels.h5"), Error);
  EXPECT_TRUE(same_table(read_table_hdf5(dir / "labels.h5"), sample_table(3, true)));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace labpose::projects
