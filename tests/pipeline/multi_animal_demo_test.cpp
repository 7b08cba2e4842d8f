// The multi-animal demo project (`labpose demo --animals N`): a valid multi-animal project in
// DeepLabCut's keys, labels with four header rows equal to the ground truth (hidden keypoints
// unlabeled), merged into a training set with every individual, and read by pandas as written.
#include <gtest/gtest.h>

#include <fmt/core.h>

#include <cmath>

#include "core/error.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/config.hpp"
#include "projects/label_check.hpp"
#include "projects/labels.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

DemoProjectOptions three_mice_demo(const fs::path& dir) {
  DemoProjectOptions options;
  options.dir = dir;
  options.video = {320, 240, 120, 30.0, 3};
  options.labeled_frames = 12;
  options.animals = 3;
  return options;
}

TEST(MultiAnimalDemoProject, AValidMultiAnimalProjectInDeepLabCutsKeys) {
  const TempDir dir;
  const DemoProject demo = create_demo_project(three_mice_demo(dir.path()));
  EXPECT_TRUE(demo.config.parent_path().filename().string().starts_with("demo_mice-labpose-"));
  EXPECT_EQ(fs::directory_iterator(dir.path())->path(), demo.config.parent_path())
      << "nothing else is left in the folder";
  const auto config = projects::ProjectConfig::load(demo.config);
  const auto& values = config.values();
  EXPECT_TRUE(values.multi_animal);
  EXPECT_EQ(values.identity, std::optional<bool>(false));
  EXPECT_EQ(values.individuals, (std::vector<std::string>{"mouse1", "mouse2", "mouse3"}));
  EXPECT_EQ(values.multianimal_bodyparts, synthetic_bodyparts());
  EXPECT_TRUE(values.unique_bodyparts.empty());
  EXPECT_TRUE(values.bodyparts.empty());
  EXPECT_EQ(values.skeleton.size(), 4u);
  EXPECT_EQ(values.numframes2pick, 12);
  EXPECT_TRUE(config.warnings().empty());
  const std::string text = testing::read_text(demo.config);
  for (const char* line : {"multianimalproject: true\n", "bodyparts: MULTI!\n",
                           "uniquebodyparts: []\n", "- mouse3\n"}) {
    EXPECT_TRUE(testing::contains(text, line)) << line << "\n" << text;
  }
  const projects::CheckReport report = projects::check_project_labels(config);
  EXPECT_EQ(report.count(projects::Finding::Severity::error), 0u);
  EXPECT_EQ(report.count(projects::Finding::Severity::warning), 0u);

  EXPECT_EQ(VideoReader(demo.video).frame_count(), 120);
  EXPECT_EQ(demo.video.filename(), "synthetic_mice.mp4");
  EXPECT_TRUE(demo.truth.empty());
  ASSERT_EQ(demo.mice_truth.size(), 120u);
  EXPECT_EQ(demo.mice_truth.front().size(), 3u);
}

TEST(MultiAnimalDemoProject, LabelsAndMergedSetHoldEveryMouseAsTheGroundTruth) {
  const TempDir dir;
  const DemoProject demo = create_demo_project(three_mice_demo(dir.path()));
  const auto config = projects::ProjectConfig::load(demo.config);
  const fs::path folder = demo.config.parent_path() / "labeled-data" / "synthetic_mice";
  const projects::Table table =
      projects::read_labels(projects::label_files(folder, "labpose")).table;
  EXPECT_EQ(table.column_level_names,
            (std::vector<std::string>{"scorer", "individuals", "bodyparts", "coords"}));
  ASSERT_EQ(table.column_count(), 3u * 4u * 2u);
  EXPECT_EQ(table.columns[8], (std::vector<std::string>{"labpose", "mouse2", "snout", "x"}));
  ASSERT_EQ(table.row_count(), demo.labeled_frames.size());
  EXPECT_GE(demo.labeled_frames.size(), 10u);

  MergeReport report;
  const Dataset dataset = merge_labeled_data(config, &report);
  EXPECT_EQ(dataset.individuals, (std::vector<std::string>{"mouse1", "mouse2", "mouse3"}));
  EXPECT_EQ(dataset.bodyparts, synthetic_bodyparts());
  EXPECT_EQ(dataset.multi_bodyparts, 4u);
  EXPECT_TRUE(report.dropped.empty()) << "every labeled point lies in its frame";
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const std::int64_t index = demo.labeled_frames[row];
    const std::string image = fmt::format("img{:03}.png", index);
    EXPECT_EQ(projects::image_key(table, row).image, image);
    const auto merged = std::find_if(dataset.images.begin(), dataset.images.end(), [&](auto& i) {
      return i.path == "labeled-data/synthetic_mice/" + image;
    });
    ASSERT_NE(merged, dataset.images.end()) << image;
    for (std::size_t animal = 0; animal < 3; ++animal) {
      const auto& truth = demo.mice_truth[static_cast<std::size_t>(index)][animal];
      for (std::size_t j = 0; j < truth.size(); ++j) {
        const std::size_t column = 2 * (animal * 4 + j), slot = animal * 4 + j;
        if (truth[j].visible) {
          EXPECT_EQ(table.at(row, column), truth[j].x);
          EXPECT_EQ(table.at(row, column + 1), truth[j].y);
          EXPECT_EQ(merged->x[slot], truth[j].x);
          EXPECT_EQ(merged->y[slot], truth[j].y);
        } else {
          EXPECT_TRUE(std::isnan(table.at(row, column)) && std::isnan(table.at(row, column + 1)))
              << "hidden keypoints are unlabeled";
          EXPECT_TRUE(std::isnan(merged->x[slot]));
        }
      }
    }
  }
  EXPECT_EQ(dataset.images.size() + report.skipped.size(), table.row_count());
}

TEST(MultiAnimalDemoProject, PandasReadsTheLabelsAsWritten) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  const DemoProject demo = create_demo_project(three_mice_demo(dir.path()));
  const projects::LabelFiles files = projects::label_files(
      demo.config.parent_path() / "labeled-data" / "synthetic_mice", "labpose");
  const std::string script =
      testing::shell_quote((testing::python_scripts_dir() / "pandas_tables.py").string());
  const auto pandas = [&](const std::string& arguments) {
    return testing::run(testing::shell_quote(python) + " " + script + " " + arguments);
  };
  // The .h5 as pandas reads it, written out by pandas: the CSV labpose wrote.
  const fs::path from_h5 = dir.path() / "from_h5.csv";
  const auto to_csv = pandas("to-csv " + testing::shell_quote(files.h5.string()) + " " +
                             testing::shell_quote(from_h5.string()));
  ASSERT_EQ(to_csv.exit_code, 0) << to_csv.output;
  EXPECT_EQ(testing::read_text(from_h5), testing::read_text(files.csv));
  const auto describe = pandas("describe " + testing::shell_quote(files.h5.string()));
  ASSERT_EQ(describe.exit_code, 0) << describe.output;
  EXPECT_TRUE(testing::contains(describe.output,
                                "columns.names ['scorer', 'individuals', 'bodyparts', 'coords']"))
      << describe.output;
  EXPECT_TRUE(testing::contains(describe.output, "index.nlevels 3")) << describe.output;
  EXPECT_TRUE(
      testing::contains(describe.output, fmt::format("shape ({}, 24)", demo.labeled_frames.size())))
      << describe.output;
  // The CSV as pandas reads it (four header rows, three index columns), stored again by pandas:
  // the same table.
  const fs::path from_csv = dir.path() / "from_csv.h5";
  const auto to_h5 = pandas("from-csv " + testing::shell_quote(files.csv.string()) + " " +
                            testing::shell_quote(from_csv.string()) + " fixed 3");
  ASSERT_EQ(to_h5.exit_code, 0) << to_h5.output;
  EXPECT_EQ(projects::table_to_csv(projects::read_table_hdf5(from_csv)),
            testing::read_text(files.csv));
}

TEST(MultiAnimalDemoProject, OneAnimalIsTheSingleMouseDemo) {
  const TempDir dir;
  DemoProjectOptions options = three_mice_demo(dir.path());
  options.animals = 0;
  EXPECT_THROW(create_demo_project(options), UsageError);
  options.animals = 1;
  const DemoProject demo = create_demo_project(options);
  EXPECT_TRUE(demo.config.parent_path().filename().string().starts_with("demo-labpose-"));
  EXPECT_FALSE(projects::ProjectConfig::load(demo.config).values().multi_animal);
  EXPECT_EQ(demo.truth, write_synthetic_video(dir.path() / "again.mp4", options.video));
  EXPECT_TRUE(demo.mice_truth.empty());
  options.animals = 2;
  const DemoProject two = create_demo_project(options);
  EXPECT_NE(two.config.parent_path(), demo.config.parent_path()) << "both fit in one folder";
  EXPECT_EQ(projects::ProjectConfig::load(two.config).values().individuals.size(), 2u);
}

}  // namespace
}  // namespace labpose::pipeline
