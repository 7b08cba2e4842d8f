// The labpose command line end to end: help, exit codes, create/add-videos/convert-labels/
// check-labels/doctor on generated videos and the reference project, and bad input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <limits>
#include <regex>
#include <set>

#include "nets/models/models.hpp"
#include "nets/npy.hpp"
#include "nets/ref/backend.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/training/snapshot.hpp"
#include "tests/labeling/labeling_support.hpp"
#include "tests/support/media_support.hpp"
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
  EXPECT_TRUE(contains(result.output, "\n  refine-tracks ")) << result.output;
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

// Issue 16, defect 7 and 9d from the command line: NaN weights and an .npy whose shape overflows
// are refused with a message naming the file (and the tensor), exit 1.
TEST(Cli, NetForwardRefusesNanWeightsAndAnOverflowingInputShape) {
  const TempDir dir;
  nets::ref::RefBackend backend;
  auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", 2, true});
  nets::initialize_pose_net(*net, 0);
  nets::SafetensorsFile weights = nets::net_weights(*net);
  nets::write_safetensors(weights, dir / "good.safetensors");
  weights.tensors.at("features.0.0.weight").values[5] = std::numeric_limits<float>::quiet_NaN();
  nets::write_safetensors(weights, dir / "nan.safetensors");
  nets::write_npy({{1, 3, 32, 32}, std::vector<float>(std::size_t{3} * 32 * 32, 100.0F)},
                  dir / "input.npy");
  // 2^62 float32 values: 2^64 bytes, which wrapped to 0 before.
  std::string header =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, "
      "1, 1, 1), }";
  header.append(63 - (10 + header.size()) % 64, ' ');
  testing::write_text(dir / "huge.npy", std::string("\x93NUMPY\x01\x00", 8) +
                                            static_cast<char>(header.size() + 1) + '\0' + header +
                                            "\n");
  const auto forward = [&](const std::string& weights_file, const std::string& input) {
    return labpose("net forward --arch mobilenet_v2_0.35 --bodyparts 2 --weights " +
                   shell_quote((dir / weights_file).string()) + " --input " +
                   shell_quote((dir / input).string()) + " --output-dir " +
                   shell_quote((dir / "out").string()));
  };
  CommandResult result = forward("good.safetensors", "input.npy");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // A training snapshot, with the optimizer's state beside the parameters, runs as it is.
  pipeline::SnapshotMetadata metadata;
  metadata.iteration = 3;
  metadata.architecture = "mobilenet_v2_0.35";
  metadata.bodyparts = {"snout", "tail"};
  metadata.training_fraction = 0.95;
  pipeline::write_snapshot(dir / "snapshot-3.safetensors", *net,
                           {{"first_moment", nets::HostTensor{{2}, {0.5F, 0.5F}}}}, metadata);
  result = forward("snapshot-3.safetensors", "input.npy");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  result = forward("nan.safetensors", "input.npy");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, (dir / "nan.safetensors").string() +
                                          ": tensor \"features.0.0.weight\" has 1 NaN values"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "hint: the file is damaged")) << result.output;
  nets::write_npy({{1, 3, 0, 32}, {}}, dir / "empty.npy");
  result = forward("good.safetensors", "empty.npy");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output,
                       "expected an (N, 3, H, W) array of RGB images, found the "
                       "empty shape (1, 3, 0, 32)"))
      << result.output;
  result = forward("good.safetensors", "huge.npy");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, (dir / "huge.npy").string() +
                                          " is not a NumPy .npy array labpose can read: its shape "
                                          "holds more values than can exist"))
      << result.output;
}

// Issue 16, defect 9c: a 300-digit number given to a numeric option came back in a 300-digit
// range message. Every numeric option of every command now says in one short line what it takes.
TEST(Cli, EveryNumericOptionRefusesAHugeNumberInOneShortSentence) {
  const std::string huge = "1" + std::string(299, '0');
  const CommandResult port = labpose("label config.yaml --port " + huge);
  EXPECT_EQ(port.exit_code, 2);
  EXPECT_TRUE(contains(port.output,
                       "error: --port must be a whole number from 0 to 65535 (found a 300-digit "
                       "number)\nhint: see `labpose label --help`"))
      << port.output;
  // Whole numbers get a 300-digit one (too large for any of them); numbers with a lower bound a
  // negative one (a huge positive number is a valid duration). The rest take any number.
  const std::regex numeric_option(R"(\n +(?:-\w,)?(--[\w-]+) +(INT|UINT|FLOAT)(\S*))");
  std::size_t checked = 0;
  for (const char* command :
       {"create",        "add-videos",       "extract-frames", "label",
        "check-labels",  "convert-labels",   "create-dataset", "train",
        "evaluate",      "analyze",          "filter",         "plot-trajectories",
        "labeled-video", "extract-outliers", "merge",          "bench",
        "demo",          "doctor",           "net forward",    "refine-tracks"}) {
    const std::string help = labpose(std::string(command) + " --help").output;
    for (auto it = std::sregex_iterator(help.begin(), help.end(), numeric_option);
         it != std::sregex_iterator(); ++it) {
      const std::string option = (*it)[1].str();
      const bool whole = (*it)[2].str() != "FLOAT";
      if (!whole && (*it)[3].str().empty()) continue;
      std::string arguments = std::string(command) + " " + option;
      arguments += whole ? " " : " -";
      arguments += huge;
      const CommandResult result = labpose(arguments);
      EXPECT_EQ(result.exit_code, 2) << command << " " << option << "\n" << result.output;
      EXPECT_TRUE(contains(result.output, "error: " + option + " must be ")) << result.output;
      EXPECT_TRUE(contains(result.output, "(found a 300-digit ")) << result.output;
      EXPECT_LT(result.output.size(), 200u) << result.output;
      ++checked;
    }
  }
  EXPECT_GE(checked, 50u);
}

// What CLI11 let through or worded badly: a sign on an unsigned option (it became 2^64-1),
// hexadecimal, nan and inf, and numbers too large for the option's type.
TEST(Cli, NumericOptionsTakePlainDecimalNumbersOnly) {
  const auto error_for = [](const std::string& arguments) {
    const CommandResult result = labpose(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
    return result.output;
  };
  EXPECT_TRUE(contains(error_for("train config.yaml --seed -1"),
                       "error: --seed must be a whole number of 0 or more (found -1)"));
  EXPECT_TRUE(contains(error_for("label config.yaml --port 0x10"),
                       "error: --port must be a whole number from 0 to 65535 (found \"0x10\")"));
  EXPECT_TRUE(contains(error_for("train config.yaml --max-minutes nan"),
                       "error: --max-minutes must be a number of 0 or more (found \"nan\")"));
  EXPECT_TRUE(contains(error_for("demo --minutes inf"),
                       "error: --minutes must be a number greater than 0 (found \"inf\")"));
  EXPECT_TRUE(contains(error_for("demo --minutes 0"),
                       "error: --minutes must be a number greater than 0 (found 0)\n"));
  EXPECT_TRUE(contains(error_for("bench --repeats 99999999999"),
                       "error: --repeats must be a whole number (found 99999999999, too large)"));
  EXPECT_TRUE(contains(error_for("net forward --arch x --bodyparts 2.5 --weights w --input i "
                                 "--output-dir o"),
                       "error: --bodyparts must be a whole number of 1 or more (found 2.5)\n"
                       "hint: see `labpose net forward --help`"));
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
  const std::string last = result.output.substr(result.output.rfind("{\"arch\""));
  EXPECT_TRUE(contains(last, "\"mode\": \"train\"")) << last;
  EXPECT_TRUE(contains(last, "\"fps\": ")) << last;
  // Analysis's whole path, with two slots at once.
  result = labpose(
      "bench --arch mobilenet_v2_0.35 --size 64x48 --batch 2 --pipeline --slots 2 --repeats 3 "
      "--json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::string pipeline = result.output.substr(result.output.rfind("{\"arch\""));
  EXPECT_TRUE(contains(pipeline, "\"mode\": \"pipeline\"")) << pipeline;
  EXPECT_TRUE(contains(pipeline, "\"slots\": 2, \"video\": \"\"")) << pipeline;
  // ... and on a video's frames, decoding included, beside decoding alone.
  const TempDir dir;
  testing::write_test_video(dir / "clip.avi", 12, 96, 64);
  result = labpose("bench --arch mobilenet_v2_0.35 --batch 4 --pipeline --video " +
                   shell_quote((dir / "clip.avi").string()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(std::regex_search(
      result.output, std::regex("mobilenet_v2_0.35 96x64 batch 4 on cpu .*: analysis pipeline "
                                "with 1 slot .* frames/s \\(12 frames of .*clip.avi, decoding "
                                "included; decoding alone [0-9.]+ frames/s, so [0-9]+ % of it\\)")))
      << result.output;
  EXPECT_EQ(labpose("bench --video clip.avi").exit_code, 2) << "--video needs --pipeline";
  EXPECT_EQ(labpose("bench --pipeline --train --size 64x48").exit_code, 2);
  EXPECT_EQ(labpose("bench --size 64").exit_code, 2);
  EXPECT_EQ(labpose("bench --device cuda:3 --size 64x48").exit_code, 1)
      << "no such device in this build";
}

// --precision auto follows the CPU's bf16 units; with them and VNNI hidden from oneDNN (its
// ONEDNN_MAX_CPU_ISA setting), auto is fp32, bf16 and int8 are refused, never emulated, and doctor
// says so.
TEST(Cli, BenchPrecisionFollowsTheCpu) {
  const std::string bench = " bench --arch mobilenet_v2_0.35 --size 64x48 --repeats 1 --warmup 0 ";
  const auto precision_of = [](const std::string& output) {
    const std::size_t at = output.rfind("\"precision\": \"");
    return at == std::string::npos ? std::string() : output.substr(at + 14, 4);
  };
  const std::string binary = shell_quote(testing::labpose_binary());
  const CommandResult hidden =
      testing::run("ONEDNN_MAX_CPU_ISA=AVX2 " + binary + bench + "--precision auto --json");
  ASSERT_EQ(hidden.exit_code, 0) << hidden.output;
  EXPECT_EQ(precision_of(hidden.output), "fp32") << hidden.output;
  EXPECT_TRUE(contains(hidden.output, R"("own_kernels": {"winograd": 0, "depthwise": 0})"))
      << "labpose's own kernels are AVX-512's: " << hidden.output;
  const CommandResult refused =
      testing::run("ONEDNN_MAX_CPU_ISA=AVX2 " + binary + bench + "--precision bf16");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_TRUE(contains(refused.output, "error: this CPU has no bf16 units (oneDNN uses "))
      << refused.output;
  EXPECT_TRUE(contains(refused.output, "never emulated")) << refused.output;
  const CommandResult no_vnni =
      testing::run("ONEDNN_MAX_CPU_ISA=AVX2 " + binary + bench + "--precision int8");
  EXPECT_EQ(no_vnni.exit_code, 1) << no_vnni.output;
  EXPECT_TRUE(contains(no_vnni.output, "error: this CPU has no VNNI instructions for int8"))
      << no_vnni.output;
  const std::string doctor_without =
      testing::run("ONEDNN_MAX_CPU_ISA=AVX2 " + binary + " doctor").output;
  EXPECT_TRUE(contains(doctor_without, "CPU precisions fp32 (no bf16 units")) << doctor_without;
  EXPECT_TRUE(contains(doctor_without, "no int8 (VNNI)")) << doctor_without;
  const std::string doctor = labpose("doctor").output;
  if (contains(doctor, "analysis with --precision auto takes int8 for a model whose keypoints")) {
    const CommandResult int8 = labpose(bench + "--precision int8 --json");
    ASSERT_EQ(int8.exit_code, 0) << int8.output;
    EXPECT_EQ(precision_of(int8.output), "int8") << int8.output;
  }
  // auto takes bf16 only where its units are clearly faster than fp32, and says why it does not.
  const CommandResult automatic = labpose(bench + "--precision auto --json");
  ASSERT_EQ(automatic.exit_code, 0) << automatic.output;
  const bool bf16_units = contains(doctor, "CPU precisions fp32, bf16");
  if (!bf16_units) {
    EXPECT_EQ(precision_of(automatic.output), "fp32") << automatic.output;
  } else if (precision_of(automatic.output) == "bf16") {
    EXPECT_TRUE(contains(automatic.output, "--precision auto: inference plans on cpu in bf16"))
        << automatic.output;
    // MobileNetV2's stride-1 depthwise layers go to labpose's kernel on a CPU with AMX, where it
    // was measured faster than oneDNN's (not on Zen 5's AVX-512 BF16 without AMX).
    EXPECT_EQ(contains(automatic.output, R"("depthwise": 0})"), !contains(doctor, "+ AMX"))
        << automatic.output;
  } else {
    EXPECT_EQ(precision_of(automatic.output), "fp32") << automatic.output;
    EXPECT_TRUE(contains(automatic.output, "its bf16 units are not clearly faster here (bf16 "))
        << automatic.output;
  }
  EXPECT_EQ(labpose(bench + "--precision fp64").exit_code, 2);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(text.substr(start, end - start));
  return out;
}

// On a CPU with AVX2 and no AVX-512 (as oneDNN sees this one with ONEDNN_MAX_CPU_ISA=AVX2), every
// convolution of every architecture runs on oneDNN's AVX2 kernels, none on its reference loops
// (tens of times slower: they took a convolution whose destination layout oneDNN chose itself).
TEST(Cli, AnAvx2CpuRunsNoConvolutionOnReferenceLoops) {
  const std::string binary = shell_quote(testing::labpose_binary());
  for (const char* arch : {"resnet_50", "mobilenet_v2_0.35", "efficientnet_lite0"}) {
    const CommandResult run =
        testing::run("ONEDNN_MAX_CPU_ISA=AVX2 ONEDNN_VERBOSE=1 " + binary +
                     " bench --size 64x48 --repeats 1 --warmup 0 --arch " + arch);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    int convolutions = 0;
    std::vector<std::string> reference;
    for (const std::string& line : lines(run.output)) {
      if (!contains(line, "onednn_verbose,exec,cpu,convolution,")) continue;
      ++convolutions;
      if (contains(line, ",ref:")) reference.push_back(line);
    }
    EXPECT_GT(convolutions, 20) << arch << ": too few convolutions in oneDNN's log\n" << run.output;
    EXPECT_TRUE(reference.empty()) << arch << ": " << reference.size() << " of " << convolutions
                                   << " convolutions on reference loops, the first:\n"
                                   << reference.front();
  }
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
