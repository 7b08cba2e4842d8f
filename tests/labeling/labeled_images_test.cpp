// check-labels' pictures: labeled-data/<video>_labeled/<image> with every label drawn.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>

#include "labeling/labeled_images.hpp"
#include "pipeline/images/image_files.hpp"
#include "projects/labels.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::labeling {
namespace {
namespace fs = std::filesystem;

// Alice's empty label table with the bodyparts of make_labeling_project's config.
projects::Table empty_labels() {
  return projects::make_label_table("Alice", {"snout", "leftear", "rightear", "tailbase"});
}

TEST(LabeledImages, DrawsEveryLabelOntoItsFrame) {
  testing::TempDir dir;
  const fs::path config_file = testing::make_labeling_project(dir.path());
  const fs::path folder = config_file.parent_path() / "labeled-data" / "mouse";
  projects::Table table = empty_labels();
  table.add_row({"labeled-data", "mouse", "img001.png"});
  table.at(0, 0) = 40;  // snout at (40, 10)
  table.at(0, 1) = 10;
  table.at(0, 6) = 50;  // tailbase at (50, 40)
  table.at(0, 7) = 40;
  table.add_row({"labeled-data", "mouse", "img002.png"});  // a frame without points
  projects::write_labels(table, projects::label_files(folder, "Alice"));

  const auto drawn = draw_labeled_images(projects::ProjectConfig::load(config_file));
  ASSERT_EQ(drawn.size(), 1u);
  EXPECT_EQ(drawn[0].folder, folder.parent_path() / "mouse_labeled");
  EXPECT_EQ(drawn[0].images, 2u);
  EXPECT_TRUE(drawn[0].problems.empty());

  const cv::Mat original = pipeline::read_image(folder / "img001.png", pipeline::ChannelOrder::bgr);
  const cv::Mat picture =
      pipeline::read_image(drawn[0].folder / "img001.png", pipeline::ChannelOrder::bgr);
  ASSERT_EQ(picture.size(), original.size());
  const auto changed = [&](int x, int y) {
    return picture.at<cv::Vec3b>(y, x) != original.at<cv::Vec3b>(y, x);
  };
  EXPECT_TRUE(changed(40, 10));  // the snout's '+'
  EXPECT_TRUE(changed(50, 40));  // the tailbase's '+'
  EXPECT_TRUE(changed(45, 25));  // the skeleton between them
  EXPECT_FALSE(changed(5, 45));  // far from every label
  // rainbow's last colour (red) at the tailbase: more red than blue there.
  const cv::Vec3b tailbase = picture.at<cv::Vec3b>(40, 50);
  EXPECT_GT(tailbase[2], tailbase[0]);
  // The unlabeled frame is drawn as it is.
  const cv::Mat unlabeled =
      pipeline::read_image(drawn[0].folder / "img002.png", pipeline::ChannelOrder::bgr);
  EXPECT_EQ(
      cv::norm(unlabeled, pipeline::read_image(folder / "img002.png", pipeline::ChannelOrder::bgr),
               cv::NORM_INF),
      0.0);
}

// A row naming an image that is not there (a hand-edited CSV): a problem that names it, escaped.
TEST(LabeledImages, AMissingImageIsAProblemNamedSafely) {
  testing::TempDir dir;
  const fs::path config_file = testing::make_labeling_project(dir.path());
  const fs::path folder = config_file.parent_path() / "labeled-data" / "mouse";
  projects::Table table = empty_labels();
  table.add_row({"labeled-data", "mouse", "\x1b[2Jimg001.png"});
  projects::write_labels(table, projects::label_files(folder, "Alice"));

  const auto drawn = draw_labeled_images(projects::ProjectConfig::load(config_file));
  ASSERT_EQ(drawn.size(), 1u);
  ASSERT_EQ(drawn[0].problems.size(), 1u);
  EXPECT_TRUE(testing::contains(
      drawn[0].problems[0],
      "cannot read the image " + (folder / "\\x1b[2Jimg001.png").string() + ": it does not exist"))
      << drawn[0].problems[0];
}

// A multi-animal project (DeepLabCut's example, blank frames): as DeepLabCut's check_labels with
// individuals, <image>_individual.png with each animal in a colour of its own, its skeleton drawn
// between its own points only.
TEST(LabeledImages, MultiAnimalLabelsAreColouredByIndividual) {
  testing::TempDir dir;
  const fs::path config_file = testing::copy_multi_animal_example(
      dir.path(), {"img26.png", "img11.png", "img17.png", "img12.png", "img05.png"});
  const auto drawn = draw_labeled_images(projects::ProjectConfig::load(config_file));
  ASSERT_EQ(drawn.size(), 2u);
  const auto& short_video =
      drawn[0].folder.filename() == "m3v1mp4short_labeled" ? drawn[0] : drawn[1];
  EXPECT_EQ(short_video.images, 5u);
  const cv::Mat picture = pipeline::read_image(short_video.folder / "img26_individual.png",
                                               pipeline::ChannelOrder::bgr);
  ASSERT_FALSE(picture.empty());
  EXPECT_FALSE(fs::exists(short_video.folder / "img26.png"));
  // img26: individual1's bodypart1 and bodypart2, individual2's bodypart1, single's corner1.
  const auto at = [&](double x, double y) {
    return picture.at<cv::Vec3b>(static_cast<int>(y), static_cast<int>(x));
  };
  const cv::Vec3b first_bodypart1 = at(104.605, 99.957), first_bodypart2 = at(212.642, 134.388);
  const cv::Vec3b second_bodypart1 = at(125.572, 471.208), corner = at(116.579, 439.124);
  const cv::Vec3b background(90, 90, 90);
  // Colours compared up to the antialiasing of a marker at a fractional position.
  const auto distance = [](const cv::Vec3b& a, const cv::Vec3b& b) {
    return cv::norm(cv::Vec3d(a) - cv::Vec3d(b), cv::NORM_INF);
  };
  for (const cv::Vec3b& point : {first_bodypart1, second_bodypart1, corner})
    EXPECT_GT(distance(point, background), 30.0);
  EXPECT_LE(distance(first_bodypart1, first_bodypart2), 4.0) << "one animal, one colour";
  EXPECT_GT(distance(first_bodypart1, second_bodypart1), 30.0) << "two animals, two colours";
  EXPECT_GT(distance(corner, first_bodypart1), 30.0);
  EXPECT_GT(distance(corner, second_bodypart1), 30.0);
  // The skeleton joins individual1's bodypart1 and bodypart2, never two animals' points.
  EXPECT_NE(at((104.605 + 212.642) / 2, (99.957 + 134.388) / 2), background);
  EXPECT_EQ(at((104.605 + 125.572) / 2, (99.957 + 471.208) / 2), background);
}

}  // namespace
}  // namespace labpose::labeling
