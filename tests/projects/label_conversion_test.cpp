// convert-labels: CSV <-> H5 in every folder, unchanged files untouched, backups of changed ones.
#include <gtest/gtest.h>

#include "projects/label_conversion.hpp"
#include "projects/labels.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

TEST(ConvertLabels, ReferenceProjectCsvToH5AndBackChangesNothing) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const TempDir dir;
  const fs::path copy = testing::copy_openfield_project(project, dir.path());
  const ProjectConfig config = ProjectConfig::load(copy / "config.yaml");
  const LabelFiles files = label_files(copy / "labeled-data" / "m4s1", "Pranav");
  const std::string original_csv = testing::read_text(files.csv);

  auto results = convert_labels(config, LabelFormat::h5);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].outcome, ConversionResult::Outcome::written);
  ASSERT_TRUE(results[0].backup.has_value()) << "the old table-format .h5 is kept";
  EXPECT_TRUE(fs::exists(*results[0].backup));
  EXPECT_EQ(probe_table_hdf5(files.h5), Hdf5Format::fixed);
  EXPECT_EQ(read_labels(files).source, files.h5);

  // Back to CSV: same content, so nothing is rewritten.
  results = convert_labels(config, LabelFormat::csv);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].outcome, ConversionResult::Outcome::unchanged);
  EXPECT_EQ(testing::read_text(files.csv), original_csv);

  // A deleted CSV is rewritten byte for byte from the .h5.
  fs::remove(files.csv);
  results = convert_labels(config, LabelFormat::csv);
  EXPECT_EQ(results[0].outcome, ConversionResult::Outcome::written);
  EXPECT_EQ(testing::read_text(files.csv), original_csv);
}

TEST(ConvertLabels, MalformedSourceFailsThatFileOnlyAndKeepsTheTarget) {
  const TempDir dir;
  for (const char* folder : {"a", "b"}) fs::create_directories(dir / "labeled-data" / folder);
  testing::write_text(dir / "config.yaml", "Task: t\nscorer: me\ndate: Jan1\nproject_path: " +
                                               dir.path().string() + "\nbodyparts:\n- snout\n");
  const std::string good =
      "scorer,,,me,me\nbodyparts,,,snout,snout\ncoords,,,x,y\nlabeled-data,a,img0.png,1,2\n";
  testing::write_text(dir / "labeled-data" / "a" / "CollectedData_me.csv", good);
  testing::write_text(
      dir / "labeled-data" / "b" / "CollectedData_me.csv",
      "scorer,,,me,me\nbodyparts,,,snout,snout\ncoords,,,x,y\nlabeled-data,b,img0.png,1\n");
  testing::write_text(dir / "labeled-data" / "b" / "CollectedData_me.h5", "previous file");
  const auto results = convert_labels(ProjectConfig::load(dir / "config.yaml"), LabelFormat::h5);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].outcome, ConversionResult::Outcome::written);
  EXPECT_EQ(results[1].outcome, ConversionResult::Outcome::failed);
  EXPECT_NE(results[1].message.find("CollectedData_me.csv:4: this row has 4 cells"),
            std::string::npos)
      << results[1].message;
  EXPECT_EQ(testing::read_text(dir / "labeled-data" / "b" / "CollectedData_me.h5"),
            "previous file");
}

}  // namespace
}  // namespace labpose::projects
