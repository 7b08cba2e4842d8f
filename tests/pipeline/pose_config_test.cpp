// pose_cfg.yaml: every value round trips, PyYAML reads it, bad values name file:line:col.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "pipeline/training/pose_config.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
using testing::TempDir;

PoseConfig sample() {
  PoseConfig c;
  c.net_type = "resnet_50";
  c.init_weights = "/weights/resnet50 imagenet.safetensors";
  c.project_path = "/data/openfield-Pranav-2018-10-30";
  c.dataset =
      "training-datasets/iteration-0/UnaugmentedDataSet_openfieldOct30/CollectedData_Pranav.h5";
  c.metadataset =
      "training-datasets/iteration-0/UnaugmentedDataSet_openfieldOct30/"
      "Documentation_data-openfield_95shuffle1.pickle";
  c.split =
      "training-datasets/iteration-0/UnaugmentedDataSet_openfieldOct30/"
      "labpose-split-95shuffle1.json";
  c.bodyparts = {"snout", "leftear", "rightear", "tailbase"};
  c.symmetric_pairs = {{"leftear", "rightear"}};
  c.multi_step = {{1e-5, 100}, {2.5e-4, 3000}};
  c.max_iters = 3000;
  c.crop_width = 288;  // not the default, so the round trip shows it
  c.crop_height = 192;
  c.mirror = true;
  c.optimizer = "sgd";
  c.freeze_backbone_stages = 3;
  c.unfreeze_backbone_after = 500;
  c.backbone_lr_multiplier = 0.1;
  c.schedule = ScheduleKind::iterations;
  c.backbone_warmup = 0.05;
  c.sync_batch_norm = true;
  c.precision = "tf32";  // not the default either
  return c;
}

TEST(PoseConfig, RoundTripsEveryValue) {
  const TempDir dir;
  write_pose_config(sample(), dir / "pose_cfg.yaml");
  std::vector<std::string> warnings;
  const PoseConfig back = read_pose_config(dir / "pose_cfg.yaml", &warnings);
  EXPECT_TRUE(warnings.empty());
  const PoseConfig want = sample();
  EXPECT_EQ(back.net_type, want.net_type);
  EXPECT_EQ(back.init_weights, want.init_weights);
  EXPECT_EQ(back.split, want.split);
  EXPECT_EQ(back.bodyparts, want.bodyparts);
  EXPECT_EQ(back.symmetric_pairs, want.symmetric_pairs);
  EXPECT_EQ(back.multi_step, want.multi_step);
  EXPECT_EQ(back.crop_width, 288);
  EXPECT_EQ(back.crop_height, 192);
  EXPECT_TRUE(back.mirror);
  EXPECT_EQ(back.optimizer, "sgd");
  EXPECT_EQ(back.freeze_backbone_stages, 3);
  EXPECT_EQ(back.unfreeze_backbone_after, 500);
  EXPECT_DOUBLE_EQ(back.backbone_lr_multiplier, 0.1);
  EXPECT_EQ(back.schedule, ScheduleKind::iterations);
  EXPECT_DOUBLE_EQ(back.backbone_warmup, 0.05);
  EXPECT_TRUE(back.sync_batch_norm);
  EXPECT_EQ(back.precision, "tf32");
  EXPECT_DOUBLE_EQ(back.locref_stdev, 7.2801);
  EXPECT_DOUBLE_EQ(back.learning_rate(0), 1e-5);
  EXPECT_DOUBLE_EQ(back.learning_rate(100), 2.5e-4);
  EXPECT_DOUBLE_EQ(back.learning_rate(5000), 2.5e-4);
  const std::string text = testing::read_text(dir / "pose_cfg.yaml");
  EXPECT_NE(text.find("multi_step: [[1.0e-05, 100], [0.00025, 3000]]"), std::string::npos) << text;
  EXPECT_NE(text.find("all_joints: [[0], [1], [2], [3]]"), std::string::npos) << text;
}

TEST(PoseConfig, PyYamlReadsNumbersAsNumbers) {
  LABPOSE_REQUIRE_INTEROP_PYTHON(python);
  const TempDir dir;
  write_pose_config(sample(), dir / "pose_cfg.yaml");
  const auto result = testing::run(
      testing::shell_quote(python) + " -c \"import yaml; c = yaml.safe_load(open('" +
      (dir / "pose_cfg.yaml").string() +
      "')); print(c['multi_step'], c['locref_stdev'], c['crop_size'], c['init_weights'])\"");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(
      result.output,
      "[[1e-05, 100], [0.00025, 3000]] 7.2801 [288, 192] /weights/resnet50 imagenet.safetensors\n");
}

// DeepLabCut writes no precision: such a file, like labpose's own default, trains in the precision
// the device is fastest in (bf16 on a CPU whose bf16 units are clearly faster, tf32 on a GPU).
TEST(PoseConfig, AFileWithoutPrecisionTrainsInAuto) {
  const TempDir dir;
  testing::write_text(dir / "pose_cfg.yaml",
                      "net_type: resnet_50\nsplit: s.json\nall_joints_names: [a, b]\n");
  EXPECT_EQ(read_pose_config(dir / "pose_cfg.yaml").precision, "auto");
  write_pose_config(PoseConfig{}, dir / "written.yaml");
  EXPECT_NE(testing::read_text(dir / "written.yaml").find("\nprecision: auto\n"),
            std::string::npos);
}

std::string error_of(const std::string& text) {
  const TempDir dir;
  testing::write_text(dir / "pose_cfg.yaml", text);
  const std::string message = testing::error_text([&] { read_pose_config(dir / "pose_cfg.yaml"); });
  if (message.empty()) return message;
  const std::size_t start = message.find("pose_cfg.yaml");
  return message.substr(start, message.find("\nhint: ") - start);  // the message, not its hint
}

TEST(PoseConfig, BadValuesNameTheLine) {
  const std::string base = "net_type: resnet_50\nsplit: s.json\nall_joints_names: [a, b]\n";
  EXPECT_EQ(error_of(base + "batch_size: 0\n"),
            "pose_cfg.yaml:4:13: batch_size must be a whole number from 1 to 4096 (found \"0\")");
  // Values beyond an int are refused, never wrapped (2^31 would become a negative batch).
  EXPECT_EQ(error_of(base + "batch_size: 2147483648\n"),
            "pose_cfg.yaml:4:13: batch_size must be a whole number from 1 to 4096 (found "
            "\"2147483648\")");
  EXPECT_NE(error_of(base + "iteration: 4294967298\n")
                .find("iteration must be a whole number from 0 to 1000000"),
            std::string::npos);
  EXPECT_NE(error_of(base + "crop_size: [64, 4294967360]\n")
                .find("the crop height must be a whole number from 64 to 16384"),
            std::string::npos);
  EXPECT_EQ(error_of(base + "schedule: weekly\n"),
            "pose_cfg.yaml:4:11: schedule must be time or iterations (found \"weekly\")");
  EXPECT_EQ(error_of(base + "backbone_warmup: 1\n"),
            "pose_cfg.yaml:4:18: backbone_warmup must be a fraction of the run from 0 up to, but "
            "not including, 1 (found 1)");
  EXPECT_NE(error_of(base + "sync_batch_norm: maybe\n").find("pose_cfg.yaml:4:18: sync_batch_norm"),
            std::string::npos);
  EXPECT_EQ(error_of(base + "precision: int8\n"),
            "pose_cfg.yaml:4:12: precision must be tf32, fp32, bf16 or auto (found \"int8\")");
  EXPECT_EQ(error_of(base + "optimizer: lbfgs\n"),
            "pose_cfg.yaml:4:12: optimizer must be adamw or sgd (found \"lbfgs\")");
  EXPECT_NE(error_of(base + "multi_step: [[0.001, 100], [0.0001, 50]]\n")
                .find("a multi_step iteration must be a whole number >= 101"),
            std::string::npos);
  EXPECT_NE(error_of(base + "symmetric_pairs: [[a, c]]\n")
                .find("\"c\" in symmetric_pairs is not a bodypart"),
            std::string::npos);
  EXPECT_NE(error_of(base + "crop_size: 320\n").find("crop_size must be [width, height]"),
            std::string::npos);
  EXPECT_NE(error_of("net_type: [\n").find("is not valid YAML"), std::string::npos);
  EXPECT_NE(error_of("net_type: resnet_50\n").find("the key 'split' is missing"),
            std::string::npos);
}

}  // namespace
}  // namespace labpose::pipeline
