// Merged training data, splits and DeepLabCut's decoding and error summary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/evaluation/errors.hpp"
#include "pipeline/pose/decode.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"
#include "tests/support/keypoint_oracle.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
using testing::TempDir;

TEST(Decode, FirstMaximumPlusRefinement) {
  // J = 2 maps of 3 x 4 cells (stride 8).
  std::vector<float> score(std::size_t{2} * 12, -5.0F), locref(std::size_t{4} * 12, 0.0F);
  score[1 * 4 + 2] = 3.0F;  // bodypart 0: row 1, col 2
  score[12 + 0] = 1.0F;     // bodypart 1: a tie between (0, 0) and (2, 3); the first wins
  score[12 + 2 * 4 + 3] = 1.0F;
  locref[0 * 12 + 1 * 4 + 2] = 0.5F;   // dx0
  locref[1 * 12 + 1 * 4 + 2] = -1.0F;  // dy0
  KeypointPrediction out[2];
  testing::decode_keypoints(score.data(), locref.data(), 2, 3, 4, DecodeSettings{}, out);
  EXPECT_DOUBLE_EQ(out[0].x, 2 * 8 + 4 + 0.5 * 7.2801);
  EXPECT_DOUBLE_EQ(out[0].y, 1 * 8 + 4 - 7.2801);
  EXPECT_NEAR(out[0].likelihood, 1.0 / (1.0 + std::exp(-3.0)), 1e-12);
  EXPECT_DOUBLE_EQ(out[1].x, 4.0);
  EXPECT_DOUBLE_EQ(out[1].y, 4.0);
  DecodeSettings plain;
  plain.location_refinement = false;
  testing::decode_keypoints(score.data(), locref.data(), 2, 3, 4, plain, out);
  EXPECT_DOUBLE_EQ(out[0].x, 20.0);
}

// Damaged and missing images and points outside the image are reported and left out, never a
// failure later in training.
TEST(Dataset, BadImagesAndPointsAreReportedAndLeftOut) {
  const TempDir dir;
  const auto config = projects::ProjectConfig::load(testing::copy_demo_project(dir.path()));
  const projects::ProjectLayout layout(config.project_dir());
  const projects::LabelFiles files =
      projects::label_files(layout.labeled_folders().front(), config.values().scorer);
  projects::LoadedLabels labels = projects::read_labels(files);
  MergeReport before;
  const std::size_t usable = merge_labeled_data(config, &before).images.size();
  ASSERT_GE(usable, 4u);
  const Dataset all = merge_labeled_data(config, nullptr);
  // The first usable image: its file cut in half (the header still reads); the second: removed;
  // the third: its first visible point moved outside the image.
  const std::filesystem::path project = config.project_dir();
  const std::string truncated = testing::read_text(project / all.images[0].path);
  testing::write_text(project / all.images[0].path, truncated.substr(0, truncated.size() / 2));
  std::filesystem::remove(project / all.images[1].path);
  // The third: the first later image with two visible points, so that it keeps one.
  std::size_t moved = 2;
  const auto visible = [](const LabeledImage& image) {
    std::size_t count = 0;
    for (const double x : image.x) count += std::isnan(x) ? 0u : 1u;
    return count;
  };
  while (moved < all.images.size() && visible(all.images[moved]) < 2) ++moved;
  ASSERT_LT(moved, all.images.size());
  std::size_t row = 0;
  for (; row < labels.table.row_count(); ++row) {
    if (labels.table.row_path(row) == all.images[moved].path) break;
  }
  ASSERT_LT(row, labels.table.row_count());
  std::size_t column = 0;
  while (std::isnan(labels.table.at(row, column))) column += 2;
  labels.table.at(row, column) = 5000.0;
  projects::write_labels(labels.table, files);

  MergeReport report;
  const Dataset merged = merge_labeled_data(config, &report);
  EXPECT_EQ(merged.images.size(), usable - 2);
  const auto mentions = [](const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
      return line.find(part) != std::string::npos;
    });
  };
  // Each message names the image and the label file to fix.
  const auto named = [&](std::size_t i) {
    return all.images[i].path + " (" + all.images[i].source + "): ";
  };
  EXPECT_TRUE(all.images[0].source.starts_with("CollectedData_")) << all.images[0].source;
  EXPECT_TRUE(
      mentions(report.skipped, named(0) + "the image is missing, not a PNG/JPEG, or damaged"));
  EXPECT_TRUE(mentions(report.skipped, named(1) + "the image is missing"));
  EXPECT_TRUE(mentions(report.dropped, named(moved))) << "the point outside";
  EXPECT_TRUE(mentions(report.dropped, "is outside the 320x240 image"));
}

TEST(Dataset, MergesTheDemoProjectAndSplitsReproducibly) {
  const TempDir dir;
  DemoProjectOptions options;
  options.dir = dir.path();
  options.labeled_frames = 12;
  const DemoProject demo = create_demo_project(options);
  const auto config = projects::ProjectConfig::load(demo.config);
  MergeReport report;
  const Dataset dataset = merge_labeled_data(config, &report);
  EXPECT_EQ(dataset.bodyparts, config.keypoint_names());
  EXPECT_EQ(dataset.images.size() + report.skipped.size(), 12u);
  ASSERT_FALSE(dataset.images.empty());
  EXPECT_EQ(dataset.images[0].width, options.video.width);
  EXPECT_TRUE(std::is_sorted(dataset.images.begin(), dataset.images.end(),
                             [](const auto& a, const auto& b) { return a.path < b.path; }));

  const Split split = make_split(dataset, 0.8, 1, 7);
  EXPECT_EQ(split.train.size(),
            static_cast<std::size_t>(0.8 * static_cast<double>(dataset.images.size())));
  EXPECT_EQ(split.train.size() + split.test.size(), dataset.images.size());
  EXPECT_EQ(make_split(dataset, 0.8, 1, 7).test, split.test) << "same seed, same split";
  write_split(split, dir / "split.json");
  const Split back = read_split(dir / "split.json");
  EXPECT_EQ(back.train, split.train);
  EXPECT_EQ(indices_of(dataset, back.test, dir / "split.json").size(), split.test.size());
  EXPECT_THROW(indices_of(dataset, {"labeled-data/x/img1.png"}, dir / "split.json"), Error);

  // The merged table round trips through its file.
  projects::write_table_hdf5(dataset_table(dataset, "me"), dir / "merged.h5");
  const Dataset reread = read_dataset(dir / "merged.h5", config.project_dir());
  ASSERT_EQ(reread.images.size(), dataset.images.size());
  EXPECT_EQ(reread.images[0].path, dataset.images[0].path);

  // Perfect predictions give zero error; a 3-4-5 offset gives 5.
  std::vector<std::size_t> all(dataset.images.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::vector<std::vector<KeypointPrediction>> predictions;
  for (const auto& image : dataset.images) {
    std::vector<KeypointPrediction> keypoints;
    for (std::size_t j = 0; j < image.x.size(); ++j)
      keypoints.push_back({image.x[j] + 3, image.y[j] + 4, j == 0 ? 0.1 : 0.9});
    predictions.push_back(keypoints);
  }
  const ErrorSummary summary = summarize_errors(dataset, all, predictions, 0.6);
  EXPECT_NEAR(summary.mean, 5.0, 1e-9);
  EXPECT_TRUE(std::isnan(summary.per_bodypart_pcutoff[0])) << "bodypart 0 is always below pcutoff";
  EXPECT_LT(summary.points_pcutoff, summary.points);
}

}  // namespace
}  // namespace labpose::pipeline
