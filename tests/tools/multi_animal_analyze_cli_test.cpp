// labpose analyze's options that belong to one kind of project: a single-animal option on a
// multi-animal project, and a multi-animal one on a single-animal project, are usage errors that
// say so before any work (the analysis itself: tests/pipeline/multi_animal_analysis_test.cpp).
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;

TEST(MultiAnimalAnalyzeCli, OptionsOfTheOtherKindOfProjectAreUsageErrors) {
  const testing::TempDir dir;
  fs::create_directories(dir.path() / "mice");
  fs::create_directories(dir.path() / "mouse");
  const testing::CommandResult made = testing::run_labpose(
      "--quiet demo --project-only --animals 3 --frames 30 --labeled-frames "
      "4 --dir " +
      shell_quote((dir.path() / "mice").string()));
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const fs::path mice = made.output.substr(0, made.output.find('\n'));
  const std::string video =
      shell_quote((mice.parent_path() / "videos" / "synthetic_mice.mp4").string());
  for (const auto& [option, message] : std::vector<std::pair<std::string, std::string>>{
           {"--batch-size 4", "--batch-size is for single-animal projects"},
           {"--slots 2", "--slots is for single-animal projects"},
           {"--precision bf16", "--precision bf16 is for single-animal projects"},
           {"--tracker skeleton", "--tracker skeleton is not a tracker"}}) {
    const testing::CommandResult refused =
        testing::run_labpose("analyze " + shell_quote(mice.string()) + " " + video + " " + option);
    EXPECT_EQ(refused.exit_code, 2) << option << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, message)) << refused.output;
  }

  const fs::path mouse = testing::demo_project_from_cli(dir.path() / "mouse", 30, 4);
  const std::string one_video =
      shell_quote((mouse.parent_path() / "videos" / "synthetic_mouse.mp4").string());
  for (const std::string option : {"--tracker box", "--no-track"}) {
    const testing::CommandResult refused = testing::run_labpose(
        "analyze " + shell_quote(mouse.string()) + " " + one_video + " " + option);
    EXPECT_EQ(refused.exit_code, 2) << option << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, "is for multi-animal projects")) << refused.output;
  }
}

}  // namespace
}  // namespace labpose
