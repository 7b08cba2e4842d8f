// labpose analyze on a multi-animal project through the CLI: a run killed with SIGKILL mid-video
// resumes to the files of an uninterrupted run, the options of one kind of project are usage
// errors on the other, before any work, and labpose track and stitch after analyze --no-track give
// the files of the single pass; --tracker identity links by the identity head's votes, and is a
// usage error for a network without one (the files themselves:
// tests/pipeline/multi_animal_analysis_test.cpp and multi_animal_tracking_test.cpp).
#include <gtest/gtest.h>

#include "tests/support/test_support.hpp"
#include "tests/tools/trained_mice.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::contains;
using testing::mice_video;
using testing::shell_quote;
using testing::trained_mice;

TEST(MultiAnimalAnalyzeCli, KilledMidVideoThenResumedGivesTheSameFiles) {
  const testing::TempDir dir;
  const fs::path config = trained_mice(dir.path() / "mice", 200);
  const std::string c = shell_quote(config.string());
  const std::string v = mice_video(config);
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

  // kill -9 once the journal holds its first frame's whole record (single-threaded, so that there
  // is time): the header line, then the record's length (8 bytes) and the record. A record can
  // be megabytes (a briefly trained network's many candidates and their costs), so a fixed size
  // could stop the run inside the first record, and then there is nothing to resume.
  const fs::path killed = dir.path() / "killed";
  const fs::path journal = killed / (base + ".labpose-detections");
  const std::string j = shell_quote(journal.string());
  const testing::CommandResult stopped = testing::run_until_then_signal(
      "OMP_NUM_THREADS=1 " + shell_quote(testing::labpose_binary()) + " analyze " + c + " " + v +
          " --csv --threads 1 --dest " + shell_quote(killed.string()),
      "h=$(head -n 1 " + j + " | wc -c) && n=$(od -An -t u8 -j \"$h\" -N 8 " + j +
          ") && [ -n \"$n\" ] && [ $(stat -c %s " + j + ") -ge $((h + 8 + n)) ]",
      "KILL");
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
           {"--precision int8", "--precision int8 is for single-animal projects"},
           {"--tracker skeleton", "--tracker skeleton is not a tracker"}}) {
    const testing::CommandResult refused =
        testing::run_labpose("analyze " + shell_quote(mice.string()) + " " + video + " " + option);
    EXPECT_EQ(refused.exit_code, 2) << option << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, message)) << refused.output;
  }

  const fs::path mouse = testing::demo_project_from_cli(dir.path() / "mouse", 30, 4);
  const std::string one_video =
      shell_quote((mouse.parent_path() / "videos" / "synthetic_mouse.mp4").string());
  for (const std::string option : {"--tracker box", "--no-track", "--no-temporal-prior"}) {
    const testing::CommandResult refused = testing::run_labpose(
        "analyze " + shell_quote(mouse.string()) + " " + one_video + " " + option);
    EXPECT_EQ(refused.exit_code, 2) << option << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, "is for multi-animal projects")) << refused.output;
  }
}

TEST(MultiAnimalAnalyzeCli, TrackThenStitchGiveTheFilesOfTheSinglePass) {
  const testing::TempDir dir;
  const fs::path config = trained_mice(dir.path() / "mice", 30);
  const std::string c = shell_quote(config.string());
  const std::string v = mice_video(config);
  const fs::path once = dir.path() / "once", steps = dir.path() / "steps";
  const std::string in_steps = " --dest " + shell_quote(steps.string());
  const testing::CommandResult whole = testing::run_labpose(
      "analyze " + c + " " + v + " --csv --dest " + shell_quote(once.string()));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;

  // Before analyze: the missing file is named, with what makes it.
  const testing::CommandResult early = testing::run_labpose("track " + c + " " + v + in_steps);
  EXPECT_EQ(early.exit_code, 1) << early.output;
  EXPECT_TRUE(contains(early.output, "_assemblies.pickle does not exist")) << early.output;
  EXPECT_TRUE(contains(early.output, "labpose analyze")) << early.output;

  const testing::CommandResult detected =
      testing::run_labpose("analyze " + c + " " + v + " --no-track" + in_steps);
  ASSERT_EQ(detected.exit_code, 0) << detected.output;
  // The steps take the frame count the analysis recorded: the video itself is not read again.
  const fs::path video = config.parent_path() / "videos" / "synthetic_mice.mp4";
  testing::write_text(video, std::string(fs::file_size(video), '\0'));
  const testing::CommandResult tracked = testing::run_labpose("track " + c + " " + v + in_steps);
  ASSERT_EQ(tracked.exit_code, 0) << tracked.output;
  EXPECT_TRUE(contains(tracked.output, "_el.pickle\n")) << tracked.output;
  const testing::CommandResult stitched =
      testing::run_labpose("stitch " + c + " " + v + " --csv" + in_steps);
  ASSERT_EQ(stitched.exit_code, 0) << stitched.output;
  const std::size_t end = stitched.output.find("_el.h5\n");
  ASSERT_NE(end, std::string::npos) << stitched.output;
  const std::size_t start = stitched.output.rfind('\n', end) + 1;  // npos + 1 = 0
  const std::string name =
      fs::path(stitched.output.substr(start, end + 6 - start)).filename().string();
  const std::string base = name.substr(0, name.size() - std::string("_el.h5").size());
  for (const std::string suffix : {"_el.pickle", "_el.csv"}) {
    EXPECT_EQ(testing::read_text(steps / (base + suffix)),
              testing::read_text(once / (base + suffix)))
        << suffix;
  }
  const testing::CommandResult again = testing::run_labpose("stitch " + c + " " + v + in_steps);
  EXPECT_TRUE(contains(again.output, "exists; --overwrite makes it again")) << again.output;

  const testing::CommandResult box =
      testing::run_labpose("track " + c + " " + v + " --tracker box" + in_steps + " && " +
                           shell_quote(testing::labpose_binary()) + " stitch " + c + " " + v +
                           " --tracker box" + in_steps);
  EXPECT_EQ(box.exit_code, 0) << box.output;
  EXPECT_TRUE(fs::exists(steps / (base + "_bx.pickle")));
  EXPECT_TRUE(fs::exists(steps / (base + "_bx.h5")));

  const std::string assemblies = testing::read_text(steps / (base + "_assemblies.pickle"));
  testing::write_text(steps / (base + "_assemblies.pickle"),
                      assemblies.substr(0, assemblies.size() / 2));
  const testing::CommandResult damaged =
      testing::run_labpose("track " + c + " " + v + " --overwrite" + in_steps);
  EXPECT_EQ(damaged.exit_code, 1) << damaged.output;
  EXPECT_TRUE(contains(damaged.output, base + "_assemblies.pickle: byte")) << damaged.output;
  EXPECT_TRUE(fs::exists(steps / (base + "_el.pickle"))) << "the tracklets are left as they were";

  fs::create_directories(dir.path() / "mouse");
  const fs::path mouse = testing::demo_project_from_cli(dir.path() / "mouse", 30, 4);
  const testing::CommandResult single = testing::run_labpose(
      "stitch " + shell_quote(mouse.string()) + " " +
      shell_quote((mouse.parent_path() / "videos" / "synthetic_mouse.mp4").string()));
  EXPECT_EQ(single.exit_code, 2) << single.output;
  EXPECT_TRUE(contains(single.output, "is for multi-animal projects")) << single.output;
}

TEST(MultiAnimalAnalyzeCli, TheIdentityTrackerLinksByTheIdentityHeadsVotes) {
  const testing::TempDir dir;
  const fs::path config = trained_mice(dir.path() / "mice", 30, true);
  const std::string c = shell_quote(config.string());
  const std::string v = mice_video(config);
  const std::string in_dest = " --dest " + shell_quote((dir.path() / "out").string());
  const testing::CommandResult analyzed =
      testing::run_labpose("analyze " + c + " " + v + " --tracker identity" + in_dest);
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.output;
  EXPECT_FALSE(contains(analyzed.output, "motion and shape")) << analyzed.output;
  const std::size_t end = analyzed.output.find("_id.h5\n");
  ASSERT_NE(end, std::string::npos) << analyzed.output;
  const std::size_t start = analyzed.output.rfind('\n', end) + 1;  // npos + 1 = 0
  const fs::path tracks = analyzed.output.substr(start, end + 6 - start);
  const fs::path tracklets = tracks.parent_path() / (tracks.stem().string() + ".pickle");
  const std::string single_pass = testing::read_text(tracklets);

  const testing::CommandResult tracked =
      testing::run_labpose("track " + c + " " + v + " --tracker identity --overwrite" + in_dest);
  ASSERT_EQ(tracked.exit_code, 0) << tracked.output;
  EXPECT_EQ(testing::read_text(tracklets), single_pass) << "track reads the identity column";

  // The same option for a network without an identity head.
  const fs::path plain = trained_mice(dir.path() / "plain", 30);
  for (const std::string command : {"analyze", "track"}) {
    const testing::CommandResult refused =
        testing::run_labpose(command + " " + shell_quote(plain.string()) + " " + mice_video(plain) +
                             " --tracker identity");
    EXPECT_EQ(refused.exit_code, 2) << command << "\n" << refused.output;
    EXPECT_TRUE(contains(refused.output, "identity: true in " + plain.string())) << refused.output;
  }
}

}  // namespace
}  // namespace labpose
