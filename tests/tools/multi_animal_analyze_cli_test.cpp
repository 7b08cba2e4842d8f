// labpose analyze on a multi-animal project through the CLI: a run killed with SIGKILL mid-video
// resumes to the files of an uninterrupted run, and the options of one kind of project are usage
// errors on the other, before any work (the files themselves:
// tests/pipeline/multi_animal_analysis_test.cpp).
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::shell_quote;

// The only folder in `folder`.
fs::path only_folder(const fs::path& folder) {
  fs::path found;
  for (const auto& entry : fs::directory_iterator(folder)) found = entry.path();
  return found;
}

// The three-mice demo with a `frames`-frame video, trained for 4 steps through the CLI, linking
// every pair of candidates (so that a barely trained network gives animals to track). Returns its
// config.yaml.
fs::path trained_mice(const fs::path& dir, int frames) {
  fs::create_directories(dir);
  const testing::CommandResult made =
      testing::run_labpose("--quiet demo --project-only --animals 3 --labeled-frames 6 --frames " +
                           std::to_string(frames) + " --dir " + shell_quote(dir.string()));
  EXPECT_EQ(made.exit_code, 0) << made.output;
  const fs::path config = made.output.substr(0, made.output.find('\n'));
  const std::string c = shell_quote(config.string());
  const testing::CommandResult created = testing::run_labpose(
      "--quiet create-dataset " + c + " --net mobilenet_v2_0.35 --weights none");
  EXPECT_EQ(created.exit_code, 0) << created.output;
  const fs::path model = only_folder(config.parent_path() / "labpose-models" / "iteration-0");
  testing::set_yaml_values(model / "train" / "pose_cfg.yaml", {{"crop_size", "[64, 64]"},
                                                               {"batch_size", "2"},
                                                               {"display_iters", "2"},
                                                               {"save_iters", "4"},
                                                               {"evaluate_iters", "0"},
                                                               {"max_iters", "4"}});
  const testing::CommandResult trained = testing::run_labpose("--quiet train " + c);
  EXPECT_EQ(trained.exit_code, 0) << trained.output;
  testing::set_yaml_values(model / "test" / "inference_cfg.yaml",
                           {{"pafthreshold", "0.0"}, {"minimalnumberofconnections", "1"}});
  return config;
}

TEST(MultiAnimalAnalyzeCli, KilledMidVideoThenResumedGivesTheSameFiles) {
  const testing::TempDir dir;
  const fs::path config = trained_mice(dir.path() / "mice", 200);
  const std::string c = shell_quote(config.string());
  const std::string v =
      shell_quote((config.parent_path() / "videos" / "synthetic_mice.mp4").string());
  const testing::CommandResult whole = testing::run_labpose(
      "analyze " + c + " " + v + " --csv --dest " + shell_quote((dir.path() / "whole").string()));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  // The printed path of the tracks: the line that ends in _el.h5.
  const std::size_t end = whole.output.find("_el.h5\n");
  ASSERT_NE(end, std::string::npos) << whole.output;
  const std::size_t start = whole.output.rfind('\n', end) + 1;  // npos + 1 = 0
  const fs::path whole_h5 = whole.output.substr(start, end + 6 - start);
  const std::string base = whole_h5.filename().string().substr(
      0, whole_h5.filename().string().size() - std::string("_el.h5").size());

  // kill -9 once the journal holds some frames (single-threaded, so that there is time).
  const fs::path killed = dir.path() / "killed";
  const fs::path journal = killed / (base + ".labpose-detections");
  const testing::CommandResult stopped = testing::run_until_then_signal(
      "OMP_NUM_THREADS=1 " + shell_quote(testing::labpose_binary()) + " analyze " + c + " " + v +
          " --csv --threads 1 --dest " + shell_quote(killed.string()),
      "[ $(stat -c %s " + shell_quote(journal.string()) + " || echo 0) -gt 20000 ]", "KILL");
  EXPECT_EQ(stopped.exit_code, 137) << stopped.output;
  ASSERT_TRUE(fs::exists(journal)) << "killed before it finished";
  EXPECT_FALSE(fs::exists(killed / (base + "_el.h5")));

  const testing::CommandResult resumed = testing::run_labpose(
      "analyze " + c + " " + v + " --csv --dest " + shell_quote(killed.string()));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_TRUE(contains(resumed.output, "synthetic_mice.mp4: resuming at frame ")) << resumed.output;
  EXPECT_FALSE(fs::exists(journal));
  for (const std::string suffix : {"_el.csv", "_full.pickle", "_assemblies.pickle", "_el.pickle"}) {
    EXPECT_EQ(testing::read_text(killed / (base + suffix)),
              testing::read_text(dir.path() / "whole" / (base + suffix)))
        << suffix;
  }
}

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
