// check-labels (validation): each kind of problem is found and named; a clean project has none.
#include <gtest/gtest.h>

#include <fstream>

#include "projects/label_check.hpp"
#include "projects/layout.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::projects {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_text;

// A minimal valid 8x6 RGB PNG (the header is all check-labels reads).
void write_png(const fs::path& path, int width, int height) {
  std::string png = "\x89PNG\r\n\x1a\n";
  png += std::string("\0\0\0\x0dIHDR", 8);
  for (int value : {width, height}) {
    for (int shift = 24; shift >= 0; shift -= 8) png += static_cast<char>((value >> shift) & 0xff);
  }
  png += std::string("\x08\x02\0\0\0", 5);
  write_text(path, png);
}

struct Fixture {
  TempDir dir;
  fs::path project = dir.path();
  fs::path folder = project / "labeled-data" / "mouse1";

  Fixture() {
    fs::create_directories(folder);
    fs::create_directories(project / "videos");
    write_text(project / "videos" / "mouse1.mp4", "x");
    write_text(project / "config.yaml",
               "Task: t\nscorer: me\ndate: Jan1\nproject_path: " + project.string() +
                   "\nvideo_sets:\n  " + (project / "videos" / "mouse1.mp4").string() +
                   ":\n    crop: 0, 8, 0, 6\nbodyparts:\n- snout\n- tail\n");
    for (const char* image : {"img0.png", "img1.png", "img2.png"}) write_png(folder / image, 8, 6);
  }
  ProjectConfig config() const { return ProjectConfig::load(project / "config.yaml"); }
  void write_csv(const std::string& rows) const {
    write_text(
        folder / "CollectedData_me.csv",
        "scorer,,,me,me,me,me\nbodyparts,,,snout,snout,tail,tail\ncoords,,,x,y,x,y\n" + rows);
  }
};

std::string all_messages(const CheckReport& report) {
  std::string text;
  for (const auto& finding : report.project_findings) text += finding.message + "\n";
  for (const auto& folder : report.folders) {
    for (const auto& finding : folder.findings) text += finding.message + "\n";
  }
  return text;
}

TEST(CheckLabels, CleanProjectHasNoFindings) {
  const Fixture fixture;
  fixture.write_csv(
      "labeled-data,mouse1,img0.png,1.5,2.5,3,4\nlabeled-data,mouse1,img1.png,,,7.5,5.5\n");
  const CheckReport report = check_project_labels(fixture.config());
  EXPECT_EQ(report.count(Finding::Severity::error), 0u) << all_messages(report);
  EXPECT_EQ(report.count(Finding::Severity::warning), 0u) << all_messages(report);
  ASSERT_EQ(report.folders.size(), 1u);
  EXPECT_EQ(report.folders[0].images, 3u);
  EXPECT_EQ(report.folders[0].rows, 2u);
  EXPECT_EQ(report.folders[0].labeled_frames, 2u);
  EXPECT_EQ(report.folders[0].labeled_points, 3u);
}

TEST(CheckLabels, FindsEveryKindOfRowProblem) {
  const Fixture fixture;
  fixture.write_csv(
      "labeled-data,mouse1,img0.png,1.5,2.5,3,4\n"
      "labeled-data,mouse1,img0.png,1,1,1,1\n"      // duplicate
      "labeled-data,mouse1,img9.png,1,1,1,1\n"      // missing image
      "labeled-data,mouse1,img1.png,1,,1,1\n"       // only x
      "labeled-data,mouse1,img2.png,8.5,1,1,1\n");  // outside 8x6
  const CheckReport report = check_project_labels(fixture.config());
  const std::string messages = all_messages(report);
  const std::string csv = (fixture.folder / "CollectedData_me.csv").string();
  EXPECT_NE(messages.find(csv + ":5: the image labeled-data/mouse1/img0.png is listed twice"),
            std::string::npos)
      << messages;
  EXPECT_NE(messages.find(csv + ":6: the image labeled-data/mouse1/img9.png does not exist"),
            std::string::npos)
      << messages;
  EXPECT_NE(messages.find(csv + ":7: snout has only x set"), std::string::npos) << messages;
  EXPECT_NE(messages.find(csv + ":8: snout at (8.5, 1) is outside the 8x6 image"),
            std::string::npos)
      << messages;
  EXPECT_EQ(report.count(Finding::Severity::error), 3u) << messages;
}

TEST(CheckLabels, UnknownBodypartAndRaggedRowsAreErrors) {
  const Fixture fixture;
  write_text(
      fixture.folder / "CollectedData_me.csv",
      "scorer,,,me,me\nbodyparts,,,nose,nose\ncoords,,,x,y\nlabeled-data,mouse1,img0.png,1,2\n");
  std::string messages = all_messages(check_project_labels(fixture.config()));
  EXPECT_NE(messages.find("unknown bodypart \"nose\" (config.yaml lists snout, tail)"),
            std::string::npos)
      << messages;

  fixture.write_csv("labeled-data,mouse1,img0.png,1,2,3\n");
  messages = all_messages(check_project_labels(fixture.config()));
  EXPECT_NE(messages.find("CollectedData_me.csv:4: this row has 6 cells but the header has 7"),
            std::string::npos)
      << messages;
}

TEST(CheckLabels, ProjectLevelBookkeeping) {
  const Fixture fixture;
  fixture.write_csv("labeled-data,mouse1,img0.png,1,2,3,4\n");
  fs::remove(fixture.project / "videos" / "mouse1.mp4");
  fs::create_directories(fixture.project / "labeled-data" / "orphan");
  write_png(fixture.project / "labeled-data" / "orphan" / "img0.png", 8, 6);
  write_text(fixture.project / "labeled-data" / "orphan" / "CollectedData_me.csv",
             "scorer,,,me,me,me,me\nbodyparts,,,snout,snout,tail,tail\ncoords,,,x,y,x,y\n"
             "labeled-data,orphan,img0.png,1,2,3,4\n");
  const CheckReport report = check_project_labels(fixture.config());
  const std::string messages = all_messages(report);
  EXPECT_NE(messages.find("mouse1.mp4 is not there"), std::string::npos) << messages;
  EXPECT_NE(messages.find("labeled-data/orphan has no video in video_sets"), std::string::npos)
      << messages;
  EXPECT_EQ(report.count(Finding::Severity::error), 0u) << messages;
}

TEST(CheckLabels, CsvAndH5ThatDisagreeAreReported) {
  const Fixture fixture;
  fixture.write_csv("labeled-data,mouse1,img0.png,1,2,3,4\n");
  Table table = read_table_csv(fixture.folder / "CollectedData_me.csv");
  table.at(0, 0) = 1.25;
  write_table_hdf5(table, fixture.folder / "CollectedData_me.h5");
  const std::string messages = all_messages(check_project_labels(fixture.config()));
  EXPECT_NE(messages.find("CollectedData_me.h5 and CollectedData_me.csv differ (1 value; first: "
                          "mouse1/img0.png snout x is 1.25 in the .h5 and 1 in the CSV (line 4))"),
            std::string::npos)
      << messages;
}

TEST(CheckLabels, NamesFromARowAreEscaped) {
  const Fixture fixture;
  fixture.write_csv("labeled-data,mouse1,\x1b[2Jimg0.png,1,2,3,\n");
  const std::string messages = all_messages(check_project_labels(fixture.config()));
  EXPECT_EQ(messages.find('\x1b'), std::string::npos) << messages;
  EXPECT_NE(messages.find("the image labeled-data/mouse1/\\x1b[2Jimg0.png does not exist"),
            std::string::npos)
      << messages;
}

TEST(CheckLabels, ReferenceProjectIsValid) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const TempDir dir;
  const fs::path copy = testing::copy_openfield_project(project, dir.path());
  const CheckReport report = check_project_labels(ProjectConfig::load(copy / "config.yaml"));
  EXPECT_EQ(report.count(Finding::Severity::error), 0u) << all_messages(report);
  ASSERT_EQ(report.folders.size(), 1u);
  EXPECT_EQ(report.folders[0].rows, 116u);
  EXPECT_EQ(report.folders[0].labeled_points, 116u * 4);
}

}  // namespace
}  // namespace labpose::projects
