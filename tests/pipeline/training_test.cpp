// Training: targets, augmentation, the batch loader's determinism, and the training loop (loss goes
// down, exact resume, interrupts, snapshots, frozen stages) on a small synthetic project.
#include <gtest/gtest.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "devices/devices.hpp"
#include "devices/precision_speed.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/models/backbones.hpp"
#include "nets/models/models.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/training/augment.hpp"
#include "pipeline/training/loader.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/training/targets.hpp"
#include "pipeline/training/trainer.hpp"
#include "projects/table.hpp"
#include "tests/pipeline/training_fixture.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {
namespace fs = std::filesystem;
using testing::TempDir;

TEST(Targets, DiskAroundVisibleKeypointsOnly) {
  const int h = 6, w = 8;
  const double x[2] = {20.0, std::nan("")}, y[2] = {12.0, 5.0};
  std::vector<float> score(std::size_t{2} * h * w), locref(std::size_t{4} * h * w),
      weights(std::size_t{4} * h * w);
  TargetSettings settings;
  settings.radius = 9.0;
  build_targets(x, y, 2, h, w, settings, score.data(), locref.data(), weights.data());
  int positives = 0;
  for (int r = 0; r < h; ++r) {
    for (int c = 0; c < w; ++c) {
      const double dx = 20.0 - (c * 8 + 4), dy = 12.0 - (r * 8 + 4);
      const bool inside = dx * dx + dy * dy <= 81.0;
      const std::size_t i = static_cast<std::size_t>(r) * w + static_cast<std::size_t>(c);
      EXPECT_EQ(score[i], inside ? 1.0F : 0.0F) << r << "," << c;
      EXPECT_EQ(weights[i], inside ? 1.0F : 0.0F);
      EXPECT_EQ(weights[static_cast<std::size_t>(h * w) + i], inside ? 1.0F : 0.0F);
      if (inside) {
        ++positives;
        EXPECT_FLOAT_EQ(locref[i], static_cast<float>(dx / 7.2801));
        EXPECT_FLOAT_EQ(locref[static_cast<std::size_t>(h * w) + i],
                        static_cast<float>(dy / 7.2801));
      }
    }
  }
  EXPECT_EQ(positives, 5);  // the cell centres (20,12), (12,12), (28,12), (20,4) and (20,20)
  for (int i = h * w; i < 2 * h * w; ++i)
    EXPECT_EQ(score[static_cast<std::size_t>(i)], 0.0F) << "missing: negatives only";
}

PoseConfig plain_augmentation() {
  PoseConfig config;
  config.bodyparts = {"nose", "leftear", "rightear"};
  config.symmetric_pairs = {{"leftear", "rightear"}};
  config.crop_width = 96;
  config.crop_height = 80;
  config.brightness = config.contrast = 0.0;
  config.blur_probability = config.noise_probability = 0.0;
  return config;
}

// A black image with one white dot per keypoint, of distinct sizes so they can be told apart.
cv::Mat dots(const std::vector<double>& x, const std::vector<double>& y) {
  cv::Mat image(120, 160, CV_8UC3, cv::Scalar::all(0));
  for (std::size_t j = 0; j < x.size(); ++j) {
    cv::circle(image, cv::Point(static_cast<int>(x[j]), static_cast<int>(y[j])), 2,
               cv::Scalar::all(255), -1);
  }
  return image;
}

TEST(Augment, KeypointsFollowTheImageAndFlipsSwapPartners) {
  PoseConfig config = plain_augmentation();
  config.mirror = true;
  config.rotateratio = 1.0;
  // The nose is left of the ears' midpoint: in a mirrored sample it is right of it.
  const std::vector<double> x = {60, 60, 100}, y = {40, 70, 70};
  const cv::Mat image = dots(x, y);
  const auto partners = flip_partners(config);
  EXPECT_EQ(partners, (std::vector<int>{0, 2, 1}));
  int flips = 0;
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    nets::Random random(seed);
    const AugmentedSample sample = augment(image, x, y, config, partners, random);
    ASSERT_EQ(sample.pixels.size(), 96u * 80u * 3u);
    const cv::Mat crop(80, 96, CV_8UC3, const_cast<std::uint8_t*>(sample.pixels.data()));
    for (std::size_t j = 0; j < 3; ++j) {
      if (std::isnan(sample.x[j])) continue;
      const int px = static_cast<int>(std::lround(sample.x[j])),
                py = static_cast<int>(std::lround(sample.y[j]));
      if (px < 1 || py < 1 || px > 94 || py > 78) continue;
      EXPECT_GT(crop.at<cv::Vec3b>(py, px)[0], 100)
          << "seed " << seed << " bodypart " << j << " at " << px << "," << py;
    }
    if (!std::isnan(sample.x[0]) && !std::isnan(sample.x[1]) && !std::isnan(sample.x[2])) {
      nets::Random again(seed);
      EXPECT_EQ(augment(image, x, y, config, partners, again).x, sample.x) << "deterministic";
      const bool mirrored = sample.x[0] > (sample.x[1] + sample.x[2]) / 2;
      flips += mirrored ? 1 : 0;
      // A mirrored left ear looks like a right ear: the labels swap, so leftear stays on the left.
      EXPECT_LT(sample.x[1], sample.x[2]) << "seed " << seed;
    }
  }
  EXPECT_GT(flips, 0) << "some samples are mirrored (left/right swapped)";
}

// Every image of the fixture's dataset for training, 64x64 crops of `batch`.
struct LoaderSetup {
  TrainingFixture fixture;
  Dataset dataset = read_dataset(fixture.project / "merged.h5", fixture.project);
  std::vector<std::size_t> train;
  BatchGeometry geometry;

  explicit LoaderSetup(int batch) {
    for (std::size_t i = 0; i < dataset.images.size(); ++i) train.push_back(i);
    geometry.batch = batch;
    geometry.height = geometry.width = 64;
    geometry.output_height = geometry.output_width = 8;
    geometry.joints = static_cast<int>(dataset.bodyparts.size());
  }
};

TEST(BatchLoader, BatchesDependOnlyOnSeedAndStep) {
  const LoaderSetup setup(3);
  const auto& [fixture, dataset, train, geometry] = setup;
  std::vector<std::unique_ptr<TrainingBatch>> from_start;
  {
    BatchLoader loader(dataset, train, fixture.project, fixture.pose, geometry, 0, 2);
    for (int step = 0; step < 8; ++step) from_start.push_back(loader.next());
    // Every training image appears once per epoch.
    std::vector<int> seen(train.size());
    for (int k = 0; k < static_cast<int>(train.size()); ++k) ++seen[loader.sample_of(k / 3, k % 3)];
    for (int count : seen) EXPECT_EQ(count, 1);
  }
  BatchLoader later(dataset, train, fixture.project, fixture.pose, geometry, 5, 1);
  for (int step = 5; step < 8; ++step) {
    auto batch = later.next();
    const auto& expected = *from_start[static_cast<std::size_t>(step)];
    EXPECT_EQ(batch->step, step);
    EXPECT_EQ(batch->images, expected.images) << "step " << step;
    EXPECT_EQ(batch->score, expected.score);
    EXPECT_EQ(batch->locref, expected.locref);
    later.recycle(std::move(batch));
  }
  float positives = 0;
  for (float v : from_start[0]->score) positives += v;
  EXPECT_GT(positives, 0.0F) << "the crops hold the animal";
}

TEST(BatchLoader, EachRankMakesItsSliceOfTheBatchOneProcessWouldMake) {
  const LoaderSetup setup(4);
  const auto& [fixture, dataset, train, whole] = setup;
  BatchLoader alone(dataset, train, fixture.project, fixture.pose, whole, 0, 1);
  std::vector<std::unique_ptr<BatchLoader>> ranks;
  for (int rank = 0; rank < 2; ++rank) {
    BatchGeometry slice = whole;
    slice.batch = 2;
    slice.global_batch = 4;
    slice.first_sample = 2 * rank;
    ranks.push_back(
        std::make_unique<BatchLoader>(dataset, train, fixture.project, fixture.pose, slice, 0, 1));
  }
  for (int step = 0; step < 5; ++step) {  // across the end of the first epoch (12 images)
    const auto expected = alone.next();
    const auto half = [&](const std::vector<float>& all, int rank) {
      const auto size = static_cast<std::ptrdiff_t>(all.size() / 2);
      return std::vector<float>(all.begin() + size * rank, all.begin() + size * (rank + 1));
    };
    for (int rank = 0; rank < 2; ++rank) {
      const auto batch = ranks[static_cast<std::size_t>(rank)]->next();
      EXPECT_EQ(batch->size, 2);
      EXPECT_EQ(batch->images, half(expected->images, rank)) << "step " << step << " rank " << rank;
      EXPECT_EQ(batch->score, half(expected->score, rank));
      EXPECT_EQ(batch->locref, half(expected->locref, rank));
      EXPECT_EQ(batch->locref_weights, half(expected->locref_weights, rank));
    }
  }
}

TEST(Trainer, ResumingGivesTheSameLossesAsAnUninterruptedRun) {
  TrainingFixture fixture;
  std::vector<double> straight;
  TrainOptions options = fixture.options();
  options.on_step = [&](std::int64_t, double loss) { straight.push_back(loss); };
  const TrainResult whole = train(options);
  EXPECT_EQ(whole.stop, TrainResult::Stop::finished);
  EXPECT_EQ(whole.iterations, 6);
  ASSERT_EQ(straight.size(), 6u);
  const auto stats = read_learning_stats(fixture.train_dir / "learning_stats.csv");
  ASSERT_EQ(stats.size(), 4u);  // iterations 2, 3 (test error), 4, 6 (loss and test error)
  EXPECT_TRUE(stats[1].test_error.has_value());
  EXPECT_FALSE(stats[2].test_error.has_value());
  EXPECT_TRUE(stats[3].test_error.has_value());
  const auto whole_snapshot = nets::read_safetensors(fixture.train_dir / "snapshot-6.safetensors");
  EXPECT_TRUE(fs::exists(fixture.train_dir / "snapshot-3.safetensors"));
  EXPECT_FALSE(whole.best_snapshot.empty());
  EXPECT_TRUE(fs::exists(whole.best_snapshot));
  EXPECT_THROW(train(fixture.options()), Error) << "refuses to start over existing snapshots";

  // Interrupted after iteration 4 (as by Ctrl-C), then resumed.
  clear_training_outputs(fixture.train_dir);
  std::vector<double> pieces;
  TrainOptions first = fixture.options();
  first.on_step = [&](std::int64_t iteration, double loss) {
    pieces.push_back(loss);
    if (iteration == 4) request_interrupt();
  };
  TrainResult stopped;
  {
    const InterruptHandler handler;
    stopped = train(first);
  }
  EXPECT_EQ(stopped.stop, TrainResult::Stop::interrupted);
  EXPECT_EQ(stopped.iterations, 4);
  EXPECT_TRUE(fs::exists(fixture.train_dir / "snapshot-4.safetensors"));
  TrainOptions rest = fixture.options();
  rest.resume = true;
  rest.on_step = [&](std::int64_t, double loss) { pieces.push_back(loss); };
  const TrainResult resumed = train(rest);
  EXPECT_EQ(resumed.first_iteration, 4);
  EXPECT_EQ(resumed.stop, TrainResult::Stop::finished);
  EXPECT_EQ(pieces, straight) << "the same loss at every step";
  const auto resumed_stats = read_learning_stats(fixture.train_dir / "learning_stats.csv");
  ASSERT_EQ(resumed_stats.size(), stats.size());
  for (std::size_t i = 0; i < stats.size(); ++i) {
    EXPECT_EQ(resumed_stats[i].iteration, stats[i].iteration);
    EXPECT_DOUBLE_EQ(resumed_stats[i].loss, stats[i].loss);
    EXPECT_EQ(resumed_stats[i].test_error.has_value(), stats[i].test_error.has_value());
  }
  const auto resumed_snapshot =
      nets::read_safetensors(fixture.train_dir / "snapshot-6.safetensors");
  for (const auto& [name, tensor] : whole_snapshot.tensors) {
    EXPECT_EQ(resumed_snapshot.tensors.at(name).values, tensor.values) << name;
  }
  rest.on_step = nullptr;
  EXPECT_THROW(train(rest), UsageError) << "already at max_iters";
}

// Why the mixed-precision tests cannot run on this CPU, or "" when they can.
std::string no_bf16_units() {
  if (nets::cpu::cpu_has_bf16()) return "";
  return "this CPU has no bf16 units (oneDNN uses " + nets::cpu::cpu_instructions() +
         "): training is fp32 here";
}

// Mixed precision (a CPU with bf16 units): the same recipe learns as in fp32, and a run changes
// precision on --resume (snapshots are always fp32).
TEST(Trainer, MixedPrecisionLearnsAndResumesAcrossAPrecisionChange) {
  if (const std::string why = no_bf16_units(); !why.empty()) GTEST_SKIP() << why;
  TrainingFixture fixture;
  fixture.pose.max_iters = 40;
  fixture.pose.save_iters = 20;
  fixture.pose.evaluate_iters = 20;
  fixture.write();
  std::vector<double> losses[3];
  for (int k = 0; k < 3; ++k) {
    clear_training_outputs(fixture.train_dir);
    TrainOptions options = fixture.options();
    options.precision = k == 0 ? "fp32" : k == 1 ? "bf16" : "auto";
    options.on_step = [&](std::int64_t, double loss) { losses[k].push_back(loss); };
    const TrainResult result = train(options);
    EXPECT_EQ(result.stop, TrainResult::Stop::finished);
    EXPECT_EQ(result.precision, k == 0   ? nets::PlanPrecision::fp32
                                : k == 1 ? nets::PlanPrecision::bf16
                                         : devices::automatic_cpu_precision());
  }
  ASSERT_EQ(losses[1].size(), 40u);
  EXPECT_EQ(losses[2],
            devices::automatic_cpu_precision() == nets::PlanPrecision::bf16 ? losses[1] : losses[0])
      << "auto trains in bf16 where the CPU's bf16 units are clearly faster, else in fp32";
  EXPECT_NEAR(losses[1][0], losses[0][0], 0.01 * losses[0][0]) << "the first step's loss";
  EXPECT_NE(losses[1][0], losses[0][0]) << "computed in bf16";
  double last[2] = {0.0, 0.0};
  for (int k = 0; k < 2; ++k) {
    for (std::size_t i = 30; i < 40; ++i) last[k] += losses[k][i] / 10;
  }
  EXPECT_LT(last[1], 0.6 * losses[1][0]) << "the loss falls";
  EXPECT_NEAR(last[1], last[0], 0.2 * last[0]) << "as in fp32";

  // 20 iterations in fp32, then resumed in bf16 (pose_cfg.yaml's precision) to the end.
  clear_training_outputs(fixture.train_dir);
  fixture.pose.precision = "fp32";
  fixture.write();
  TrainOptions first = fixture.options();
  first.stop_at_iteration = 20;
  EXPECT_EQ(train(first).iterations, 20);
  fixture.pose.precision = "bf16";
  fixture.write();
  TrainOptions rest = fixture.options();
  rest.resume = true;
  const TrainResult resumed = train(rest);
  EXPECT_EQ(resumed.stop, TrainResult::Stop::finished);
  EXPECT_EQ(resumed.iterations, 40);
  const std::string header = testing::read_text(resumed.last_snapshot).substr(0, 4096);
  EXPECT_NE(header.find("\"F32\""), std::string::npos);
  EXPECT_EQ(header.find("BF16"), std::string::npos) << "snapshots are fp32";
}

// A run of 20 iterations: its first 10 in `first`, then `between` with the train folder, then
// resumed in `auto` to the end; the resumed part's result.
TrainResult resumed_in_auto(nets::PlanPrecision first,
                            const std::function<void(const fs::path&)>& between) {
  TrainingFixture fixture;
  fixture.pose.max_iters = 20;
  fixture.pose.save_iters = 10;
  fixture.pose.evaluate_iters = 10;
  fixture.pose.precision = nets::precision_name(first);
  fixture.write();
  TrainOptions options = fixture.options();
  options.stop_at_iteration = 10;
  EXPECT_EQ(train(options).precision, first);
  between(fixture.train_dir);
  fixture.pose.precision = "auto";
  fixture.write();
  options = fixture.options();
  options.resume = true;
  const TrainResult resumed = train(options);
  EXPECT_EQ(resumed.iterations, 20);
  return resumed;
}

// A run resumed in `auto` keeps the precision its snapshots trained in, whatever the CPU's speeds
// measure at the new start; one of the two cases below differs from that measure.
TEST(Trainer, AutoResumesInThePrecisionItsRunTrainedIn) {
  if (const std::string why = no_bf16_units(); !why.empty()) GTEST_SKIP() << why;
  for (const auto precision : {nets::PlanPrecision::fp32, nets::PlanPrecision::bf16}) {
    EXPECT_EQ(resumed_in_auto(precision, [](const fs::path&) {}).precision, precision)
        << nets::precision_name(precision);
  }
}

// A snapshot that does not say which precision its run trained in on this kind of device (one
// written before labpose recorded it, or one trained on a GPU) is resumed in the precision `auto`
// chooses anew: the CPU's measured one.
TEST(Trainer, AutoChoosesAgainWhereTheSnapshotDoesNotSayForThisDevice) {
  if (const std::string why = no_bf16_units(); !why.empty()) GTEST_SKIP() << why;
  using Metadata = std::map<std::string, std::string>;
  const auto unrecorded = [](Metadata& metadata) {
    EXPECT_EQ(metadata.erase("precision"), 1u);
    EXPECT_EQ(metadata.erase("precision_memory"), 1u);
  };
  const auto on_a_gpu = [](Metadata& metadata) {
    EXPECT_EQ(metadata.at("precision_memory"), "host");
    metadata["precision_memory"] = "device";
  };
  // The first part trains in the precision that `auto` does not choose here.
  const nets::PlanPrecision chosen = devices::automatic_cpu_precision();
  const nets::PlanPrecision other =
      chosen == nets::PlanPrecision::bf16 ? nets::PlanPrecision::fp32 : nets::PlanPrecision::bf16;
  for (const std::function<void(Metadata&)>& edit :
       std::vector<std::function<void(Metadata&)>>{unrecorded, on_a_gpu}) {
    const TrainResult resumed = resumed_in_auto(other, [&](const fs::path& train_dir) {
      for (const auto& snapshot : list_snapshots(train_dir)) {
        nets::SafetensorsFile contents = nets::read_safetensors(snapshot.path);
        edit(contents.metadata);
        nets::write_safetensors(contents, snapshot.path);
      }
    });
    EXPECT_EQ(resumed.precision, chosen);
  }
}

// `auto`, the default, trains in tf32 on a GPU (strict fp32 where it has no TF32 units), as
// PyTorch does, not in the fp32 that `auto` means for a GPU's plans.
TEST(Trainer, AutoTrainsInTf32OnAGpu) {
  if (const std::string problem = devices::device_problem("cuda"); !problem.empty())
    GTEST_SKIP() << "no usable GPU: " << problem;
  TrainingFixture fixture;
  fixture.pose.precision = "auto";
  fixture.write();
  TrainOptions options = fixture.options();
  options.device = "cuda";
  const TrainResult result = train(options);
  EXPECT_EQ(result.stop, TrainResult::Stop::finished);
  EXPECT_EQ(result.precision,
            devices::make_backend("cuda", nets::PlanPrecision::tf32)->training_precision());
}

TEST(Trainer, LearnsAndKeepsTheNewestSnapshots) {
  TrainingFixture fixture;
  fixture.pose.max_iters = 40;
  fixture.pose.save_iters = 10;
  fixture.pose.evaluate_iters = 20;
  fixture.pose.keep_snapshots = 2;
  fixture.pose.display_iters = 10;
  fixture.write();
  std::vector<double> losses;
  TrainOptions options = fixture.options();
  options.on_step = [&](std::int64_t, double loss) { losses.push_back(loss); };
  const TrainResult result = train(options);
  ASSERT_EQ(losses.size(), 40u);
  double last = 0;
  for (std::size_t i = 30; i < 40; ++i) last += losses[i] / 10;
  EXPECT_LT(last, 0.6 * losses[0]) << "the loss falls";
  const auto snapshots = list_snapshots(fixture.train_dir);
  std::vector<std::int64_t> regular;
  for (const auto& s : snapshots) {
    if (!s.best) regular.push_back(s.iteration);
  }
  EXPECT_EQ(regular, (std::vector<std::int64_t>{30, 40}));
  ASSERT_TRUE(result.best_test_error.has_value());
  EXPECT_TRUE(snapshots.back().best);
  const auto loaded = read_snapshot(snapshots.back().path);
  ASSERT_TRUE(loaded.metadata.test_rmse.has_value());
  // The best snapshot carries the smoothed error that made it the best.
  ASSERT_EQ(loaded.metadata.extra.count("best_test_error"), 1u);
  EXPECT_DOUBLE_EQ(std::strtod(loaded.metadata.extra.at("best_test_error").c_str(), nullptr),
                   *result.best_test_error);
}

// By iterations, --max-minutes only stops the run (resumably). A simulated clock where each step
// takes 0.5 s: the 3-second limit falls after step 6.
TEST(Trainer, TimeLimitStopsWithAnEvaluatedSnapshot) {
  TrainingFixture fixture;
  fixture.pose.max_iters = 100000;
  fixture.pose.evaluate_iters = 1000;
  fixture.pose.save_iters = 1000;
  fixture.pose.schedule = ScheduleKind::iterations;
  fixture.write();
  TrainOptions options = fixture.options();
  options.max_minutes = 0.05;  // 3 seconds
  double now = 0.0;
  options.clock = [&] { return now; };
  options.on_step = [&](std::int64_t, double) { now += 0.5; };
  const TrainResult result = train(options);
  EXPECT_EQ(result.stop, TrainResult::Stop::time_limit);
  EXPECT_EQ(result.iterations, 6);
  EXPECT_DOUBLE_EQ(result.seconds, 3.0);
  const auto stats = read_learning_stats(fixture.train_dir / "learning_stats.csv");
  ASSERT_FALSE(stats.empty());
  EXPECT_EQ(stats.back().iteration, result.iterations);
  EXPECT_TRUE(stats.back().test_error.has_value()) << "the model at the time limit is evaluated";
  ASSERT_TRUE(result.best_test_error.has_value());
  const auto snapshots = list_snapshots(fixture.train_dir);
  ASSERT_FALSE(snapshots.empty());
  bool last_saved = false;
  for (const auto& s : snapshots)
    last_saved = last_saved || (!s.best && s.iteration == result.iterations);
  EXPECT_TRUE(last_saved) << "a snapshot of the last iteration";
}

TEST(Trainer, EarlyStopAfterPatienceEvaluationsWithoutImprovementKeepsTheBest) {
  TrainingFixture fixture;
  // Nothing can change (every backbone stage frozen, learning rate 0): the test error never
  // improves after the first evaluation.
  fixture.pose.multi_step = {{0.0, 1000}};
  fixture.pose.max_iters = 50;
  fixture.pose.freeze_backbone_stages = 9;
  fixture.pose.evaluate_iters = 1;
  fixture.pose.early_stop_patience = 2;
  fixture.write();
  const TrainResult result = train(fixture.options());
  EXPECT_EQ(result.stop, TrainResult::Stop::early_stopped);
  EXPECT_EQ(result.iterations, 3) << "the first evaluation, then two without improvement";
  ASSERT_TRUE(result.best_test_error.has_value());
  const auto snapshots = list_snapshots(fixture.train_dir);
  ASSERT_FALSE(snapshots.empty());
  EXPECT_TRUE(snapshots.back().best);
  EXPECT_EQ(snapshots.back().iteration, 1) << "the best is the first evaluation's";
}

TEST(Trainer, FrozenStagesDoNotChange) {
  TrainingFixture fixture;
  fixture.pose.max_iters = 2;
  fixture.pose.evaluate_iters = 0;
  fixture.pose.freeze_backbone_stages = 3;
  fixture.write();
  const TrainResult result = train(fixture.options());
  const auto trained = nets::read_safetensors(result.last_snapshot);
  // The initial values: the same seed's initialization.
  auto backend = devices::make_backend("cpu");
  auto net = nets::build_pose_net(
      *backend, {"mobilenet_v2_0.35", static_cast<int>(fixture.pose.bodyparts.size()), true});
  nets::initialize_pose_net(*net, fixture.pose.seed);
  const auto initial = nets::net_weights(*net);
  int frozen = 0, moved = 0;
  for (const auto& [name, tensor] : initial.tensors) {
    const int stage = nets::backbone_stage("mobilenet_v2_0.35", name);
    const bool same = trained.tensors.at(name).values == tensor.values;
    if (stage >= 1 && stage <= 3) {
      EXPECT_TRUE(same) << name << " is frozen";
      ++frozen;
    } else if (name.find("running") == std::string::npos &&
               name.find("weight") != std::string::npos) {
      moved += same ? 0 : 1;
    }
  }
  EXPECT_GT(frozen, 0);
  EXPECT_GT(moved, 10);
  fixture.pose.freeze_backbone_stages = 10;
  fixture.write();
  TrainOptions again = fixture.options();
  again.resume = true;
  again.max_iters = 4;
  EXPECT_THROW(train(again), UsageError) << "more stages than the backbone has";
}

// Fine-tuning on a schedule: the backbone (weights and batch-norm statistics) stays as it was for
// unfreeze_backbone_after iterations while the head learns, then trains too; a run stopped before
// or after the switch and resumed is the same run.
TEST(Trainer, UnfreezingAfterKIterationsTrainsTheBackboneAndResumesExactly) {
  TrainingFixture fixture;
  fixture.pose.net_type = "efficientnet_lite0";
  fixture.pose.freeze_backbone_stages = 9;
  fixture.pose.unfreeze_backbone_after = 3;
  fixture.pose.evaluate_iters = 0;
  fixture.pose.save_iters = 3;  // snapshot-3: after the last frozen step
  fixture.write();
  std::vector<double> straight;
  TrainOptions options = fixture.options();
  options.on_step = [&](std::int64_t, double loss) { straight.push_back(loss); };
  train(options);
  ASSERT_EQ(straight.size(), 6u);
  auto backend = devices::make_backend("cpu");
  auto net = nets::build_pose_net(
      *backend, {"efficientnet_lite0", static_cast<int>(fixture.pose.bodyparts.size()), true});
  nets::initialize_pose_net(*net, fixture.pose.seed);
  const auto initial = nets::net_weights(*net);
  const auto at3 = nets::read_safetensors(fixture.train_dir / "snapshot-3.safetensors");
  const auto at6 = nets::read_safetensors(fixture.train_dir / "snapshot-6.safetensors");
  int backbone = 0, moved = 0, statistics_moved = 0;
  for (const auto& [name, tensor] : initial.tensors) {
    if (nets::backbone_stage("efficientnet_lite0", name) == 0) {
      EXPECT_NE(at3.tensors.at(name).values, tensor.values) << name << " learns while frozen";
      continue;
    }
    ++backbone;
    EXPECT_EQ(at3.tensors.at(name).values, tensor.values) << name << " is frozen until iteration 3";
    if (at6.tensors.at(name).values != tensor.values) {
      ++moved;
      if (name.find("running_") != std::string::npos) ++statistics_moved;
    }
  }
  EXPECT_GT(backbone, 200);
  EXPECT_GT(moved, backbone * 9 / 10) << "the backbone trains after the switch";
  EXPECT_GT(statistics_moved, 50) << "with batch statistics again";

  for (const std::int64_t stop_at : {2, 4}) {
    SCOPED_TRACE(stop_at);
    clear_training_outputs(fixture.train_dir);
    std::vector<double> pieces;
    TrainOptions first = fixture.options();
    first.on_step = [&](std::int64_t iteration, double loss) {
      pieces.push_back(loss);
      if (iteration == stop_at) request_interrupt();
    };
    {
      const InterruptHandler handler;
      EXPECT_EQ(train(first).stop, TrainResult::Stop::interrupted);
    }
    TrainOptions rest = fixture.options();
    rest.resume = true;
    rest.on_step = [&](std::int64_t, double loss) { pieces.push_back(loss); };
    train(rest);
    EXPECT_EQ(pieces, straight) << "the same loss at every step";
    const auto resumed = nets::read_safetensors(fixture.train_dir / "snapshot-6.safetensors");
    for (const auto& [name, tensor] : at6.tensors)
      EXPECT_EQ(resumed.tensors.at(name).values, tensor.values) << name;
  }
}

TEST(Trainer, BackboneLearningRateMultiplierScalesTheBackboneOnly) {
  TrainingFixture fixture;
  fixture.pose.max_iters = 2;
  fixture.pose.evaluate_iters = 0;
  fixture.write();
  TrainOptions options = fixture.options();
  options.backbone_lr_multiplier = 0.0;  // as --backbone-lr-multiplier 0
  const TrainResult result = train(options);
  const auto trained = nets::read_safetensors(result.last_snapshot);
  auto backend = devices::make_backend("cpu");
  auto net = nets::build_pose_net(
      *backend, {"mobilenet_v2_0.35", static_cast<int>(fixture.pose.bodyparts.size()), true});
  nets::initialize_pose_net(*net, fixture.pose.seed);
  const auto initial = nets::net_weights(*net);
  for (const auto& parameter : net->parameters()) {
    const std::string& name = parameter->name;
    const bool same = trained.tensors.at(name).values == initial.tensors.at(name).values;
    if (nets::backbone_stage("mobilenet_v2_0.35", name) == 0) {
      EXPECT_FALSE(same) << name << ": the head learns at the full rate";
    } else if (parameter->trainable) {
      EXPECT_TRUE(same) << name << ": the backbone's rate is 0";
    }
  }
}

// Alone, a step's loss is read while the next step is queued. Every loss still lands in its own
// stats window: the rows equal a run that reads each loss at once (as the on_step hook makes it).
TEST(Trainer, LossesReadAStepLateFillTheSameStatsRows) {
  TrainingFixture fixture;
  fixture.pose.max_iters = 7;
  fixture.pose.display_iters = 3;  // rows at 3, 6 and the last, 7
  fixture.pose.save_iters = 1000;  // the last alone
  fixture.pose.evaluate_iters = 1000;
  fixture.write();
  std::vector<double> losses;
  TrainOptions at_once = fixture.options();
  at_once.on_step = [&](std::int64_t, double loss) { losses.push_back(loss); };
  train(at_once);
  const auto expected = read_learning_stats(fixture.train_dir / "learning_stats.csv");
  clear_training_outputs(fixture.train_dir);
  train(fixture.options());
  const auto late = read_learning_stats(fixture.train_dir / "learning_stats.csv");
  ASSERT_EQ(losses.size(), 7U);
  ASSERT_EQ(late.size(), 3U);
  ASSERT_EQ(expected.size(), 3U);
  const double means[3] = {(losses[0] + losses[1] + losses[2]) / 3,
                           (losses[3] + losses[4] + losses[5]) / 3, losses[6]};
  for (std::size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(late[k].iteration, expected[k].iteration);
    EXPECT_EQ(late[k].loss, expected[k].loss) << "row " << k;
    // The file keeps 6 significant digits: up to 5e-6 of the value off (1.00000 for 1.000005).
    EXPECT_NEAR(late[k].loss, means[k], 5e-6 * means[k]) << "row " << k;
  }
}

TEST(Trainer, BadInputsAreNamed) {
  TrainingFixture fixture;
  fixture.pose.optimizer = "adagrad";
  fixture.write();
  try {
    train(fixture.options());
    FAIL() << "an unknown optimizer is refused";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("pose_cfg.yaml:"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("adagrad"), std::string::npos);
  }
  fixture.pose.optimizer = "sgd";
  fixture.pose.split = "nowhere.json";
  fixture.write();
  EXPECT_THROW(train(fixture.options()), Error);
  TrainOptions resume = fixture.options();
  resume.resume = true;
  fixture.pose.split = "split.json";
  fixture.write();
  try {
    train(resume);
    FAIL() << "nothing to resume";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("no snapshot to resume"), std::string::npos);
  }
  fixture.pose.max_iters = 2;
  fixture.pose.evaluate_iters = 0;
  fixture.write();
  EXPECT_EQ(train(fixture.options()).iterations, 2) << "sgd trains";
}

}  // namespace
}  // namespace labpose::pipeline
