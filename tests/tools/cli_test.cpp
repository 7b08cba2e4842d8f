// The labpose command line end to end: help, exit codes, create/add-videos/convert-labels/
// check-labels/doctor on generated videos and the reference project, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <set>

#include "tests/labeling/labeling_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::shell_quote;
using testing::TempDir;

CommandResult labpose(const std::string& arguments) {
  return testing::run(shell_quote(testing::labpose_binary()) + " " + arguments);
}

using testing::contains;

TEST(Cli, HelpListsEverySubcommand) {
  const CommandResult result = labpose("--help");
  EXPECT_EQ(result.exit_code, 0);
  for (const char* command :
       {"create", "add-videos", "extract-frames", "label", "check-labels", "convert-labels",
        "create-dataset", "train", "evaluate", "analyze", "filter", "plot-trajectories",
        "labeled-video", "extract-outliers", "merge", "bench", "demo", "doctor", "net"}) {
    EXPECT_TRUE(contains(result.output, std::string("\n  ") + command + " ")) << command << "\n"
                                                                              << result.output;
  }
  for (const char* flag : {"--quiet", "--verbose", "--headless", "--version"}) {
    EXPECT_TRUE(contains(result.output, flag)) << flag;
  }
}

TEST(Cli, ExitCodes) {
  EXPECT_EQ(labpose("").exit_code, 2) << "no subcommand is a usage error";
  EXPECT_EQ(labpose("frobnicate").exit_code, 2);
  EXPECT_EQ(labpose("create").exit_code, 2) << "missing arguments";
  EXPECT_EQ(labpose("create --help").exit_code, 0);
  EXPECT_EQ(labpose("--version").exit_code, 0);
  const CommandResult missing = labpose("merge no-such-project/config.yaml");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(contains(missing.output, "error: ")) << missing.output;
  EXPECT_TRUE(contains(missing.output, "no-such-project/config.yaml")) << missing.output;
  const CommandResult bad_choice = labpose("convert-labels config.yaml --to xml");
  EXPECT_EQ(bad_choice.exit_code, 2);
  EXPECT_TRUE(contains(bad_choice.output, "error:")) << bad_choice.output;
}

TEST(Cli, CreateAddVideosAndCheckAGeneratedProject) {
  const TempDir dir;
  testing::write_test_video(dir / "mouse1.mp4");
  testing::write_test_video(dir / "mouse2.mp4");
  fs::create_directories(dir / "batch");
  testing::write_test_video(dir / "batch" / "mouse3.avi", 8, 64, 48);
  const CommandResult created =
      labpose("--quiet create openfield alice " + shell_quote((dir / "mouse1.mp4").string()) +
              " --dir " + shell_quote(dir.path().string()));
  ASSERT_EQ(created.exit_code, 0) << created.output;
  const std::string config = created.output.substr(0, created.output.find('\n'));
  EXPECT_TRUE(config.ends_with("/config.yaml")) << created.output;
  EXPECT_TRUE(fs::exists(config));
  EXPECT_TRUE(contains(testing::read_text(config), "crop: 0, 96, 0, 64"));

  const CommandResult added = labpose("add-videos " + shell_quote(config) + " " +
                                      shell_quote((dir / "mouse2.mp4").string()) + " " +
                                      shell_quote((dir / "batch").string()) + " --copy-videos");
  ASSERT_EQ(added.exit_code, 0) << added.output;
  EXPECT_TRUE(contains(added.output, "added 2 videos")) << added.output;
  const fs::path project = fs::path(config).parent_path();
  EXPECT_TRUE(fs::is_regular_file(project / "videos" / "mouse3.avi"));
  EXPECT_TRUE(fs::is_directory(project / "labeled-data" / "mouse3"));

  const CommandResult again = labpose("add-videos " + shell_quote(config) + " " +
                                      shell_quote((dir / "mouse2.mp4").string()));
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_TRUE(contains(again.output, "already in the project, skipped: mouse2")) << again.output;

  const CommandResult checked = labpose("check-labels " + shell_quote(config));
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "labeled-data/mouse1: 0 images, no labels yet"))
      << checked.output;
  EXPECT_TRUE(contains(checked.output, "0 errors, 0 warnings")) << checked.output;
}

TEST(Cli, CreateRefusesNonVideosAndCreatesNothing) {
  const TempDir dir;
  testing::write_text(dir / "notes.mp4", "not a video");
  testing::write_text(dir / "empty.avi", "");
  fs::create_directories(dir / "work");
  struct Case {
    std::string argument, message;
  };
  for (const Case& c : {Case{(dir / "notes.mp4").string(),
                             "cannot open " + (dir / "notes.mp4").string() + " as a video"},
                        Case{(dir / "empty.avi").string(), "is empty (0 bytes)"},
                        Case{(dir / "missing.mp4").string(), "missing.mp4 does not exist"},
                        Case{(dir / "work").string(), "holds no videos"}}) {
    const CommandResult result = labpose("create t me " + shell_quote(c.argument) + " --dir " +
                                         shell_quote((dir / "work").string()));
    EXPECT_NE(result.exit_code, 0) << c.argument;
    EXPECT_TRUE(contains(result.output, "error: ")) << result.output;
    EXPECT_TRUE(contains(result.output, c.message)) << result.output;
    EXPECT_TRUE(fs::is_empty(dir / "work")) << c.argument;
  }
}

TEST(Cli, CreateInAnUnwritableFolderFailsClearly) {
  const TempDir dir;
  testing::write_test_video(dir / "mouse.mp4");
  fs::create_directories(dir / "locked");
  fs::permissions(dir / "locked", fs::perms::owner_read | fs::perms::owner_exec |
                                      fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
  // Root ignores folder permissions: run as nobody then.
  const std::string prefix =
      geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  const CommandResult result =
      testing::run(prefix + shell_quote(testing::labpose_binary()) + " create t me " +
                   shell_quote((dir / "mouse.mp4").string()) + " --dir " +
                   shell_quote((dir / "locked").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "permission denied")) << result.output;
  EXPECT_TRUE(fs::is_empty(dir / "locked"));
}

TEST(Cli, BrokenConfigIsNamedAndLeftAlone) {
  const TempDir dir;
  testing::write_test_video(dir / "mouse.mp4");
  const CommandResult created =
      labpose("--quiet create t me " + shell_quote((dir / "mouse.mp4").string()) + " --dir " +
              shell_quote(dir.path().string()));
  ASSERT_EQ(created.exit_code, 0) << created.output;
  const std::string config = created.output.substr(0, created.output.find('\n'));
  std::string text = testing::read_text(config);
  text.replace(text.find("- bodypart3\n"), 12, "- bodypart1\n");
  testing::write_text(config, text);
  const CommandResult result = labpose("add-videos " + shell_quote(config) + " " +
                                       shell_quote((dir / "mouse.mp4").string()));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.output, "error: " + config + ":")) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "bodyparts must be a list of distinct names (found \"bodypart1\" twice)"))
      << result.output;
  EXPECT_EQ(testing::read_text(config), text);
}

TEST(Cli, ReferenceProjectConvertAndCheck) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const TempDir dir;
  const fs::path copy = testing::copy_openfield_project(project, dir.path());
  const std::string config = shell_quote((copy / "config.yaml").string());
  const std::string csv =
      testing::read_text(copy / "labeled-data" / "m4s1" / "CollectedData_Pranav.csv");

  CommandResult result = labpose("convert-labels " + config + " --to h5");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "the project has moved: project_path")) << result.output;
  EXPECT_TRUE(contains(result.output, "previous version kept as CollectedData_Pranav.h5.bak"))
      << result.output;
  result = labpose("convert-labels " + config + " --to csv");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "0 written, 1 already up to date, 0 failed"))
      << result.output;
  EXPECT_EQ(testing::read_text(copy / "labeled-data" / "m4s1" / "CollectedData_Pranav.csv"), csv);

  result = labpose("check-labels " + config);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "labeled-data/m4s1: 116 images, 116 rows, 116 labeled frames, 464 points "
                       "(from CollectedData_Pranav.h5)"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "0 errors")) << result.output;
  EXPECT_TRUE(contains(result.output, "m4s1_labeled: 116 labeled images drawn")) << result.output;
  EXPECT_TRUE(fs::is_regular_file(copy / "labeled-data" / "m4s1_labeled" / "img0115.png"));

  // An unknown bodypart in the labels is an error (exit 1) that names the file and column.
  std::string broken = csv;
  for (auto at = broken.find("tailbase"); at != std::string::npos; at = broken.find("tailbase")) {
    broken.replace(at, 8, "tailtip!");
  }
  testing::write_text(copy / "labeled-data" / "m4s1" / "CollectedData_Pranav.csv", broken);
  fs::remove(copy / "labeled-data" / "m4s1" / "CollectedData_Pranav.h5");
  result = labpose("check-labels " + config);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "unknown bodypart \"tailtip!\"")) << result.output;
}

TEST(Cli, NetForwardMatchesPyTorchAndExplainsBadInput) {
  LABPOSE_REQUIRE_TORCH(python);
  const TempDir dir;
  const auto reference =
      testing::run(shell_quote(python) + " " +
                   shell_quote(std::string(LABPOSE_SOURCE_DIR) + "/tools/torch_reference.py") +
                   " --arch mobilenet_v2_0.35 --bodyparts 2 --size 64x48 --batch 1 --out " +
                   shell_quote(dir.path().string()));
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  const std::string common = "net forward --arch mobilenet_v2_0.35 --bodyparts 2 --weights " +
                             shell_quote((dir / "weights.safetensors").string());
  CommandResult result = labpose(common + " --input " + shell_quote((dir / "input.npy").string()) +
                                 " --output-dir " + shell_quote((dir / "ours").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "scoremap.npy (1, 2, 6, 8)")) << result.output;
  // numpy compares the two outputs.
  const auto compare =
      testing::run(shell_quote(python) + " -c \"import numpy as n; d='" + dir.path().string() +
                   "'; a=n.load(d+'/ours/scoremap.npy'); b=n.load(d+'/scoremap.npy'); "
                   "c=n.load(d+'/ours/locref.npy'); e=n.load(d+'/locref.npy'); "
                   "print('max', max(abs(a-b).max()/abs(b).max(), abs(c-e).max()/abs(e).max()))\"");
  ASSERT_EQ(compare.exit_code, 0) << compare.output;
  EXPECT_LT(std::stod(compare.output.substr(compare.output.find("max ") + 4)), 1e-4)
      << compare.output;

  testing::write_text(dir / "gray.npy", "not an array");
  result = labpose(common + " --input " + shell_quote((dir / "gray.npy").string()) +
                   " --output-dir " + shell_quote((dir / "x").string()));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.output, "is not a NumPy .npy array labpose can read"))
      << result.output;
  result = labpose("net forward --arch resnet_50 --bodyparts 2 --weights " +
                   shell_quote((dir / "weights.safetensors").string()) + " --input " +
                   shell_quote((dir / "input.npy").string()) + " --output-dir " +
                   shell_quote((dir / "x").string()));
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.output, "do not fit this network")) << result.output;
  result =
      labpose("net forward --arch resnet_18 --bodyparts 2 --weights w --input i --output-dir o");
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.output, "unknown network architecture \"resnet_18\""))
      << result.output;
}

TEST(Cli, BenchPrintsFiguresAndJson) {
  CommandResult result =
      labpose("bench --arch mobilenet_v2_0.35 --size 64x48 --repeats 1 --warmup 0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "mobilenet_v2_0.35 64x48 batch 1 on cpu")) << result.output;
  EXPECT_TRUE(contains(result.output, "frames/s")) << result.output;
  result = labpose(
      "bench --arch mobilenet_v2_0.35 --size 64x48 --batch 2 --train --repeats 1 --warmup 0 "
      "--json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string last = result.output.substr(result.output.rfind('{'));
  EXPECT_TRUE(contains(last, "\"mode\": \"train\"")) << last;
  EXPECT_TRUE(contains(last, "\"fps\": ")) << last;
  EXPECT_EQ(labpose("bench --size 64").exit_code, 2);
  EXPECT_EQ(labpose("bench --device cuda:3 --size 64x48").exit_code, 1)
      << "no such device in this build";
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(text.substr(start, end - start));
  return out;
}

TEST(Cli, DemoThenExtractFramesTwiceNeverTheSameFrame) {
  const TempDir dir;
  const CommandResult demo = labpose("--quiet demo --dir " + shell_quote(dir.path().string()) +
                                     " --frames 90 --labeled-frames 8 --project-only");
  ASSERT_EQ(demo.exit_code, 0) << demo.output;
  const std::string config = lines(demo.output).at(0);
  EXPECT_TRUE(config.ends_with("/config.yaml")) << demo.output;
  EXPECT_TRUE(fs::is_regular_file(config));
  const CommandResult checked = labpose("check-labels " + shell_quote(config));
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "labeled-data/synthetic_mouse: ")) << checked.output;
  EXPECT_TRUE(contains(checked.output, "0 errors, 0 warnings")) << checked.output;

  const std::string extract =
      "--quiet extract-frames " + shell_quote(config) + " --algo uniform --num 4 --seed 3";
  const CommandResult first = labpose(extract), second = labpose(extract);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_EQ(second.exit_code, 0) << second.output;
  std::set<std::string> frames;
  for (const auto& run : {first, second}) {
    const auto paths = lines(run.output);
    EXPECT_EQ(paths.size(), 4u) << run.output;
    for (const auto& path : paths) {
      EXPECT_TRUE(path.ends_with(".png") && fs::is_regular_file(path)) << path;
      frames.insert(path);
    }
  }
  EXPECT_EQ(frames.size(), 8u) << "the second run picks 4 other frames";

  const CommandResult unknown =
      labpose("extract-frames " + shell_quote(config) + " --videos nosuch");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "error: nosuch is not a video of this project"))
      << unknown.output;
  EXPECT_TRUE(contains(unknown.output, "hint: the project has: synthetic_mouse")) << unknown.output;
  EXPECT_EQ(labpose("extract-frames " + shell_quote(config) + " --algo random").exit_code, 2);
  const CommandResult again =
      labpose("demo --project-only --dir " + shell_quote(dir.path().string()));
  EXPECT_EQ(again.exit_code, 1) << again.output;
  EXPECT_TRUE(contains(again.output, "already exists")) << again.output;
}

TEST(Cli, DoctorReportsTheBuildAndTheMachine) {
  const CommandResult result = labpose("doctor");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  for (const char* part : {"labpose ", "oneDNN", "CUDA backend", "GPUs", "FFmpeg", "libavcodec",
                           "OpenCV", "HDF5", "display        not needed"}) {
    EXPECT_TRUE(contains(result.output, part)) << part << "\n" << result.output;
  }
  EXPECT_TRUE(contains(
      testing::run("LABPOSE_HEADLESS=1 " + shell_quote(testing::labpose_binary()) + " doctor")
          .output,
      "headless       yes"));
}

TEST(Cli, LabelServesUntilCtrlCAndRefusesBadInput) {
  const TempDir dir;
  const fs::path config = testing::make_labeling_project(dir.path());
  // Ctrl-C once the URL with its token is printed: the exit is clean. A host other than the
  // loopback is served with a warning.
  const CommandResult served = testing::run_until_then_signal(
      shell_quote(testing::labpose_binary()) + " label " + shell_quote(config.string()) +
          " --no-browser --host 0.0.0.0",
      "grep -q '/?token=' \"$out\"", "INT");
  EXPECT_EQ(served.exit_code, 0) << served.output;
  EXPECT_TRUE(contains(served.output, "http://0.0.0.0:")) << served.output;
  EXPECT_TRUE(contains(served.output, "/?token=")) << served.output;
  EXPECT_TRUE(contains(served.output, "warning: serving on 0.0.0.0, not 127.0.0.1"))
      << served.output;
  EXPECT_TRUE(contains(served.output, "ssh -L")) << served.output;

  const CommandResult missing = labpose("label " + shell_quote((dir / "nothing.yaml").string()));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(contains(missing.output, "error: ")) << missing.output;
  EXPECT_EQ(labpose("label " + shell_quote(config.string()) + " --port 70000").exit_code, 2);
}

}  // namespace
}  // namespace labpose
