// labpose export end to end: the folder holds what DeepLabCut's export_model folder holds, analyze
// --model on it gives the project's rows with the project gone, a second export is refused unless
// --overwrite and never leaves a partial folder, and a damaged or edited folder fails clearly.
#include <gtest/gtest.h>

#include <cstdlib>

#include "nets/npy.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/video/reader.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::contains;
using testing::shell_quote;
using testing::TempDir;

// The rows of a DeepLabCut tracks .csv (its three header rows left out).
std::string csv_rows(const fs::path& csv) {
  const std::string text = testing::read_text(csv);
  std::size_t at = 0;
  for (int line = 0; line < 3; ++line) at = text.find('\n', at) + 1;
  return text.substr(at);
}

struct Exported {
  fs::path config, folder;
};

Exported export_demo(const TempDir& dir, int frames) {
  Exported exported;
  exported.config = testing::demo_with_random_snapshot(dir.path(), frames);
  const CommandResult result =
      testing::run_labpose("export " + shell_quote(exported.config.string()));
  EXPECT_EQ(result.exit_code, 0) << result.output;
  exported.folder = exported.config.parent_path() / "exported-models" /
                    "DLC_demo_mobilenet_v2_0.35_iteration-0_shuffle-1";
  EXPECT_TRUE(contains(result.output, exported.folder.string() + "\n")) << result.output;
  return exported;
}

TEST(ExportCli, TheFolderAnalyzesAsTheProjectWithTheProjectGone) {
  const TempDir dir;
  const Exported exported = export_demo(dir, 60);
  for (const char* name :
       {"model.safetensors", "model.safetensors.int8.json", "pose_cfg.yaml", "README.md"})
    EXPECT_TRUE(fs::exists(exported.folder / name)) << name;
  const std::string pose_cfg = testing::read_text(exported.folder / "pose_cfg.yaml");
  for (const char* line :
       {"all_joints_names: [snout, leftear, rightear, tailbase]\n", "net_type: mobilenet_v2_0.35\n",
        "num_joints: 4\n", "stride: 8\n", "locref_stdev: 7.2801\n",
        "snapshot: snapshot-7.safetensors\n", "mean_pixel: [123.675, 116.28, 103.53]\n"})
    EXPECT_TRUE(contains(pose_cfg, line)) << line << "\nnot in\n" << pose_cfg;
  // Weights only: no optimizer state, no trainer state.
  const nets::SafetensorsFile weights =
      nets::read_safetensors(exported.folder / "model.safetensors");
  for (const auto& [name, tensor] : weights.tensors)
    EXPECT_NE(name.rfind("optimizer.", 0), 0U) << name;
  EXPECT_EQ(weights.metadata.at("exported_from"), "snapshot-7.safetensors");
  EXPECT_EQ(weights.tensors.count("head.score.weight"), 1U);

  const fs::path project = exported.config.parent_path();
  const fs::path video = dir / "mouse.mp4";
  fs::copy_file(project / "videos" / "synthetic_mouse.mp4", video);
  const CommandResult from_project = testing::run_labpose(
      "--quiet analyze " + shell_quote(exported.config.string()) + " " +
      shell_quote(video.string()) + " --csv --dest " + shell_quote((dir / "project").string()));
  ASSERT_EQ(from_project.exit_code, 0) << from_project.output;
  const fs::path model = dir / "model";
  fs::rename(exported.folder, model);
  fs::remove_all(project);
  const CommandResult from_folder = testing::run_labpose(
      "analyze --model " + shell_quote(model.string()) + " " + shell_quote(video.string()) +
      " --csv --dest " + shell_quote((dir / "exported").string()));
  ASSERT_EQ(from_folder.exit_code, 0) << from_folder.output;
  const std::string tracks = "mouseDLC_mobnet_35_demo" + [&] {
    const std::string text = testing::read_text(model / "pose_cfg.yaml");
    const auto at = text.find("\ndate: ");
    return text.substr(at + 7, text.find('\n', at + 1) - at - 7);
  }() + "shuffle1_7.csv";
  ASSERT_TRUE(fs::exists(dir / "exported" / tracks)) << from_folder.output;
  EXPECT_EQ(testing::read_text(dir / "exported" / tracks),
            testing::read_text(dir / "project" / tracks));
  EXPECT_FALSE(csv_rows(dir / "exported" / tracks).empty());

  // The options that choose a project's snapshot make no sense with --model.
  const CommandResult mixed =
      testing::run_labpose("analyze --model " + shell_quote(model.string()) + " " +
                           shell_quote(video.string()) + " --shuffle 2");
  EXPECT_EQ(mixed.exit_code, 2) << mixed.output;
  EXPECT_TRUE(contains(mixed.output, "leave out --shuffle")) << mixed.output;
}

TEST(ExportCli, ASecondExportNeedsOverwriteAndLeavesNoPartialFolder) {
  const TempDir dir;
  const Exported exported = export_demo(dir, 30);
  const std::string c = shell_quote(exported.config.string());
  const CommandResult again = testing::run_labpose("export " + c);
  EXPECT_EQ(again.exit_code, 2) << again.output;
  EXPECT_TRUE(contains(again.output, "exists already")) << again.output;
  EXPECT_TRUE(contains(again.output, "--overwrite")) << again.output;
  testing::write_text(exported.folder / "note.txt", "left by the user\n");
  const CommandResult replaced = testing::run_labpose("--quiet export " + c + " --overwrite");
  ASSERT_EQ(replaced.exit_code, 0) << replaced.output;
  EXPECT_FALSE(fs::exists(exported.folder / "note.txt"));
  EXPECT_TRUE(fs::exists(exported.folder / "model.safetensors"));
  const CommandResult elsewhere = testing::run_labpose("--quiet export " + c + " --dest " +
                                                       shell_quote((dir / "out").string()));
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.output;
  EXPECT_TRUE(fs::exists(dir / "out" / exported.folder.filename() / "pose_cfg.yaml"));
  for (const fs::path& parent : {exported.folder.parent_path(), dir / "out"}) {
    for (const auto& entry : fs::directory_iterator(parent))
      EXPECT_EQ(entry.path().filename(), exported.folder.filename()) << entry.path();
  }
  // Nothing trained: a clear error, and no folder.
  fs::remove_all(exported.folder.parent_path());
  for (const auto& entry : fs::recursive_directory_iterator(exported.config.parent_path())) {
    if (entry.path().extension() == ".safetensors") fs::remove(entry.path());
  }
  const CommandResult untrained = testing::run_labpose("export " + c);
  EXPECT_EQ(untrained.exit_code, 1) << untrained.output;
  EXPECT_TRUE(contains(untrained.output, "was never trained")) << untrained.output;
  EXPECT_FALSE(fs::exists(exported.folder.parent_path()));
}

TEST(ExportCli, WhatAKilledExportLeftIsCleanedUpOrPutBack) {
  const TempDir dir;
  const Exported exported = export_demo(dir, 20);
  // As a kill -9 leaves them: a scratch folder, and the earlier export moved aside with nothing
  // in its place (the process ids are above any Linux pid_max, so no such process exists).
  const fs::path parent = exported.folder.parent_path();
  const std::string name = exported.folder.filename().string();
  fs::create_directories(parent / ("." + name + ".partial-99999999") / "junk");
  fs::rename(exported.folder, parent / (name + ".old-99999998"));
  const CommandResult again =
      testing::run_labpose("export " + shell_quote(exported.config.string()));
  EXPECT_EQ(again.exit_code, 2) << again.output;  // the earlier export is back: not overwritten
  EXPECT_TRUE(contains(again.output, "put back " + exported.folder.string())) << again.output;
  EXPECT_TRUE(fs::exists(exported.folder / "model.safetensors"));
  for (const auto& entry : fs::directory_iterator(parent))
    EXPECT_EQ(entry.path().filename().string(), name);
}

TEST(ExportCli, DamagedOrEditedFoldersFailClearly) {
  const TempDir dir;
  const Exported exported = export_demo(dir, 30);
  const fs::path video = exported.config.parent_path() / "videos" / "synthetic_mouse.mp4";
  const auto analyze = [&](const fs::path& folder) {
    return testing::run_labpose("analyze --model " + shell_quote(folder.string()) + " " +
                                shell_quote(video.string()) + " --dest " +
                                shell_quote((dir / "out").string()));
  };
  const auto copy = [&](const std::string& name) {
    const fs::path to = dir / name;
    fs::copy(exported.folder, to, fs::copy_options::recursive);
    return to;
  };
  const auto expect_failure = [&](const fs::path& folder, const std::string& message) {
    const CommandResult result = analyze(folder);
    EXPECT_EQ(result.exit_code, 1) << result.output;
    EXPECT_TRUE(contains(result.output, message)) << message << "\nnot in\n" << result.output;
  };

  const fs::path no_config = copy("no_config");
  fs::remove(no_config / "pose_cfg.yaml");
  expect_failure(no_config, "is not an exported model: it has no pose_cfg.yaml");

  const fs::path no_weights = copy("no_weights");
  fs::remove(no_weights / "model.safetensors");
  expect_failure(no_weights, "has a pose_cfg.yaml but no model.safetensors");

  const fs::path truncated = copy("truncated");
  fs::resize_file(truncated / "model.safetensors",
                  fs::file_size(truncated / "model.safetensors") / 2);
  expect_failure(truncated, "model.safetensors");

  const fs::path fewer = copy("fewer_bodyparts");
  std::string text = testing::read_text(fewer / "pose_cfg.yaml");
  text.replace(text.find("[snout, leftear, rightear, tailbase]"), 36, "[snout, leftear, rightear]");
  text.replace(text.find("num_joints: 4"), 13, "num_joints: 3");
  text.replace(text.find("[[0], [1], [2], [3]]"), 20, "[[0], [1], [2]]");
  testing::write_text(fewer / "pose_cfg.yaml", text);
  expect_failure(fewer,
                 "but its pose_cfg.yaml says mobilenet_v2_0.35 for snout, leftear, rightear");

  const fs::path miscounted = copy("miscounted");
  text = testing::read_text(miscounted / "pose_cfg.yaml");
  text.replace(text.find("num_joints: 4"), 13, "num_joints: 5");
  testing::write_text(miscounted / "pose_cfg.yaml", text);
  expect_failure(miscounted, "pose_cfg.yaml:");
  expect_failure(miscounted, "num_joints is 5 but all_joints_names lists 4 bodyparts");

  EXPECT_FALSE(fs::exists(dir / "out" / "synthetic_mouse.h5"));
}

// Frames 0, 7 and 19 of `video`, as (N, H, W, 3) for onnxruntime and (N, 3, H, W) for labpose net
// forward, both 0-255.
std::pair<nets::NpyArray, nets::NpyArray> video_frames(const fs::path& video) {
  pipeline::VideoReader reader(video);
  const auto h = static_cast<std::int64_t>(reader.height());
  const auto w = static_cast<std::int64_t>(reader.width());
  nets::NpyArray nhwc{{3, h, w, 3}, {}}, nchw{{3, 3, h, w}, {}};
  nchw.values.resize(static_cast<std::size_t>(3 * 3 * h * w));
  std::vector<std::uint8_t> pixels(reader.frame_bytes());
  std::int64_t n = 0;
  for (const std::int64_t index : {0, 7, 19}) {
    reader.seek(index);
    EXPECT_TRUE(reader.read(pixels.data()));
    for (std::size_t i = 0; i < pixels.size(); ++i) {
      nhwc.values.push_back(pixels[i]);
      const auto pixel = static_cast<std::int64_t>(i / 3),
                 channel = static_cast<std::int64_t>(i % 3);
      nchw.values[static_cast<std::size_t>(((n * 3 + channel) * h * w) + pixel)] = pixels[i];
    }
    ++n;
  }
  return {nhwc, nchw};
}

TEST(ExportCli, TheOnnxModelComputesWhatLabposeComputes) {
  const TempDir dir;
  const fs::path config = testing::demo_with_random_snapshot(dir.path(), 20);
  const CommandResult exported = testing::run_labpose(
      "--quiet export " + shell_quote(config.string()) + " --onnx --with-decoding");
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const fs::path folder =
      config.parent_path() / "exported-models" / "DLC_demo_mobilenet_v2_0.35_iteration-0_shuffle-1";
  ASSERT_TRUE(fs::exists(folder / "model.onnx"));
  EXPECT_TRUE(contains(testing::read_text(folder / "README.md"), "model.onnx (ONNX opset 17"));

  const auto [nhwc, nchw] = video_frames(config.parent_path() / "videos" / "synthetic_mouse.mp4");
  nets::write_npy(nhwc, dir / "nhwc.npy");
  nets::write_npy(nchw, dir / "nchw.npy");
  const CommandResult ours =
      testing::run_labpose("--quiet net forward --arch mobilenet_v2_0.35 --bodyparts 4 --weights " +
                           shell_quote((folder / "model.safetensors").string()) + " --input " +
                           shell_quote((dir / "nchw.npy").string()) + " --output-dir " +
                           shell_quote(dir.path().string()));
  ASSERT_EQ(ours.exit_code, 0) << ours.output;
  const CommandResult runtime = testing::run(
      "/usr/bin/python3 " +
      shell_quote((testing::python_scripts_dir() / "onnx_reference.py").string()) + " --venv " +
      shell_quote(LABPOSE_ONNX_VENV) + " --model " + shell_quote((folder / "model.onnx").string()) +
      " --out " + shell_quote(dir.path().string()) + " --run " +
      shell_quote("clip=" + (dir / "nhwc.npy").string()));
  if (runtime.exit_code == 77) {
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)
      FAIL() << "onnxruntime must be installable here:\n" << runtime.output;
    GTEST_SKIP() << "PyPI is not reachable, so onnxruntime cannot be installed:\n"
                 << runtime.output;
  }
  ASSERT_EQ(runtime.exit_code, 0) << runtime.output;
  for (const char* output : {"scoremap", "locref"}) {
    const nets::NpyArray expected = nets::read_npy(dir / (std::string(output) + ".npy"));
    const nets::NpyArray actual = nets::read_npy(dir / ("clip_" + std::string(output) + ".npy"));
    ASSERT_EQ(actual.shape, expected.shape) << output;
    float scale = 0.0F, difference = 0.0F;
    for (std::size_t i = 0; i < expected.values.size(); ++i) {
      scale = std::max(scale, std::abs(expected.values[i]));
      difference = std::max(difference, std::abs(actual.values[i] - expected.values[i]));
    }
    EXPECT_LE(difference, 1e-4F * scale) << output << ": largest |onnxruntime - labpose|";
  }
  const nets::NpyArray pose = nets::read_npy(dir / "clip_pose.npy");
  EXPECT_EQ(pose.shape, (std::vector<std::int64_t>{3, 4, 3}));
}

}  // namespace
}  // namespace labpose
