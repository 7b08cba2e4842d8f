// labpose train on two ranks under mpirun (label `mpi`), on the CPU: the same training as one
// process where the batch has no batch statistics or takes them over the ranks (sync_batch_norm,
// over TCP), replicas that stay identical where each rank has its own,
// resuming across rank counts, a batch the ranks cannot share, a rank interrupted or killed; and
// analyze sharing out the videos among its ranks.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include "pipeline/training/snapshot.hpp"
#include "tests/support/test_support.hpp"
#include "tests/tools/data_parallel_support.hpp"

namespace labpose::testing {
namespace {
namespace fs = std::filesystem;

// A batch computed whole and its two halves computed apart and averaged differ by float round-off
// only: the sums over the batch are added in another order (float addition is not associative),
// and the kernels may block a batch of 2 differently from one of 4. Relative to the loss, which
// learning_stats.csv writes to 6 significant digits:
constexpr double kLossTolerance = 1e-5;
// For the weights after 30 AdamW steps (measured: 7e-10 on a 2-core AVX-512 machine; round-off of
// 1e-7 relative in a gradient moves a weight by about that much of one step of 1e-3 at most):
constexpr double kWeightTolerance = 1e-6;

TEST(DataParallelCli, TwoRanksTrainAsOneProcessWithTheWholeBatch) {
  const SmallProject project(BatchNorm::frozen);
  CommandResult result = project.run(1, "--max-iters 30");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path alone = project.keep("alone");
  result = project.run(2, "--max-iters 30");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "data-parallel over Open MPI")) << result.output;
  EXPECT_TRUE(contains(result.output, "each rank takes 2 images of every batch of 4"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "trained to iteration 30")) << result.output;
  // Rank 0 alone reports: one progress summary, one closing line.
  const auto count = [&](const std::string& text) {
    std::size_t n = 0;
    for (auto at = result.output.find(text); at != std::string::npos;
         at = result.output.find(text, at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count("trained to iteration 30"), 1u) << result.output;
  const fs::path ranks = project.keep("ranks");
  expect_same_losses(losses(alone), losses(ranks), kLossTolerance);
  EXPECT_LE(
      largest_difference(alone / "snapshot-30.safetensors", ranks / "snapshot-30.safetensors"),
      kWeightTolerance);
}

// With sync_batch_norm, the ranks normalize with the statistics of the whole batch and take the
// gradient through them. Training with batch statistics on a batch of 4 at 64x64 is chaotic in
// float: one process on 1 and on 2 threads already ends 30 AdamW steps 1e-3 apart in the weights
// and 0.4 % apart in the loss. So the two halves are checked where round-off stays round-off:
// 30 steps at learning rate 0 (the losses and running statistics come from the ranks' shared
// statistics alone), and one step's update. Both over TCP alone, the transport between machines.
// Tolerances: about 3x how far one process on 1 and on 2 threads lands from itself (measured on
// a 2-core AVX-512 machine); with per-rank statistics each check misses by 10x to 1000x.
TEST(DataParallelCli, WithSyncBatchNormTheRanksNormalizeAsOneProcessOverTcp) {
  SmallProject project(BatchNorm::synchronized);
  set_yaml_values(project.train / "pose_cfg.yaml", {{"multi_step", "[[0.0, 10000]]"}});
  CommandResult result = project.run(1, "--max-iters 30");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path alone = project.keep("alone");
  project.mpirun_options = "--mca btl tcp,self";
  result = project.run(2, "--max-iters 30");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "batch norm statistics over the whole batch"))
      << result.output;
  const fs::path ranks = project.keep("ranks");
  // Measured: 1.4e-6 (per-rank statistics: 1.2e-3).
  expect_same_losses(losses(alone), losses(ranks), 1e-5);
  // Measured: variances 2.1e-5 relative, means 5.6e-6 of the channel's deviation (per-rank
  // statistics: 0.21 and 0.11).
  const RunningStatistics difference = running_statistics_difference(
      alone / "snapshot-30.safetensors", ranks / "snapshot-30.safetensors");
  EXPECT_LE(difference.variance, 2e-4);
  EXPECT_LE(difference.mean, 1e-4);
}

TEST(DataParallelCli, WithSyncBatchNormTheRanksTakeOneProcesssStepOverTcp) {
  // Stages 1-4 frozen: from the initial weights, the gradients of the first blocks are mostly
  // round-off (one process on 1 and 2 threads differs by 4 % in them); the 5 stages that train
  // keep 34 batch norms with batch statistics.
  SmallProject project(BatchNorm::synchronized);
  const fs::path pose = project.train / "pose_cfg.yaml";
  set_yaml_values(pose, {{"freeze_backbone_stages", "4"}, {"optimizer", "sgd"}});
  ASSERT_EQ(project.run(1, "--max-iters 1").exit_code, 0);
  const fs::path alone = project.keep("alone");
  project.mpirun_options = "--mca btl tcp,self";
  const CommandResult result = project.run(2, "--max-iters 1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const fs::path ranks = project.keep("ranks");
  set_yaml_values(pose, {{"multi_step", "[[0.0, 10000]]"}});
  ASSERT_EQ(project.run(1, "--max-iters 1").exit_code, 0);
  const fs::path start = project.keep("start");
  // Per trainable tensor, |ranks' update - one process's| / |one process's update|. Measured:
  // median 3.5e-6, largest 0.8 % (on a tensor whose update is 4e-6 long; one process on 1 and 2
  // threads: 4.3e-6 and 0.75 %). Per-rank statistics: median 1.4, largest 2.0.
  const std::vector<double> errors =
      update_differences(alone / "snapshot-1.safetensors", ranks / "snapshot-1.safetensors",
                         start / "snapshot-1.safetensors");
  ASSERT_GT(errors.size(), 50u);
  EXPECT_LE(errors[errors.size() / 2], 1e-4) << "the median";
  EXPECT_LE(errors.back(), 0.05) << "the largest";
}

TEST(DataParallelCli, ResumingChangesTheRankCountButNotTheRun) {
  const SmallProject project(BatchNorm::frozen);
  ASSERT_EQ(project.run(1, "--max-iters 8").exit_code, 0);
  const fs::path alone = project.keep("alone");

  // Two ranks to iteration 4, then one process to 8; and one process, then two ranks.
  for (const auto& [first, then] : {std::pair{2, 1}, std::pair{1, 2}}) {
    CommandResult result = project.run(first, "--max-iters 4");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    result = project.run(then, "--max-iters 8 --resume");
    ASSERT_EQ(result.exit_code, 0) << result.output;
    EXPECT_TRUE(contains(result.output, "resuming from snapshot-4")) << result.output;
    const fs::path resumed = project.keep(fmt::format("{}-then-{}", first, then));
    expect_same_losses(losses(alone), losses(resumed), kLossTolerance);
    EXPECT_LE(
        largest_difference(alone / "snapshot-8.safetensors", resumed / "snapshot-8.safetensors"),
        kWeightTolerance)
        << first << " then " << then << " ranks";
  }
}

TEST(DataParallelCli, WithBatchStatisticsPerRankTheReplicasStayTheSameAndLearn) {
  // Every 10 steps the ranks compare checksums of their replicas; training stops with an error
  // when they differ, so finishing is the check.
  const SmallProject project(BatchNorm::per_rank, 10);
  const CommandResult result = project.run(2, "--max-iters 30");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::vector<double> loss = losses(project.train);
  ASSERT_GE(loss.size(), 30u);
  const double first = (loss[0] + loss[1] + loss[2]) / 3;
  const double last = (loss[loss.size() - 1] + loss[loss.size() - 2] + loss[loss.size() - 3]) / 3;
  EXPECT_LT(last, 0.75 * first) << "the loss falls";
}

TEST(DataParallelCli, ABatchTheRanksCannotShareIsRefusedByRankZero) {
  const SmallProject project(BatchNorm::frozen);
  const CommandResult result = project.run(2, "--max-iters 2 --batch-size 3");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "batch_size 3 cannot be shared evenly by 2 ranks"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "--batch-size 2")) << result.output;
  EXPECT_EQ(result.output.find("cannot be shared"), result.output.rfind("cannot be shared"))
      << "said once\n"
      << result.output;
}

// Every rank reads the same files: a bad one is said once, by rank 0, with the usual exit status.
TEST(DataParallelCli, ABadSettingOrAMissingTrainingSetIsReportedOnce) {
  const SmallProject project(BatchNorm::frozen);
  const fs::path pose = project.train / "pose_cfg.yaml";
  set_yaml_values(pose, {{"optimizer", "lbfgs"}});
  CommandResult result = project.run(2, "--max-iters 2");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  const auto said_once = [&](const std::string& text) {
    EXPECT_NE(result.output.find(text), std::string::npos) << result.output;
    EXPECT_EQ(result.output.find(text), result.output.rfind(text)) << "said once\n"
                                                                   << result.output;
  };
  said_once("optimizer must be adamw or sgd");
  fs::remove(pose);
  result = project.run(2, "--max-iters 2");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  said_once("has no training set");
  said_once("hint: make it first: labpose create-dataset");
}

// A failure of another rank alone (here rank 1 is started for a shuffle that does not exist) is
// said by rank 0, with the rank's number.
TEST(DataParallelCli, ASettingOnlyOneRankFailsOnIsReportedWithItsRank) {
  const SmallProject project(BatchNorm::frozen);
  const std::string train = shell_quote(labpose_binary()) + " train " +
                            shell_quote(project.config.string()) + " --device cpu --max-iters 2";
  const CommandResult result = run("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                                   shell_quote(LABPOSE_MPIEXEC) + " --oversubscribe -np 1 " +
                                   train + " : -np 1 " + train + " --shuffle 7 2>&1");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  EXPECT_TRUE(contains(result.output, "error: rank 1: ")) << result.output;
  EXPECT_EQ(result.output.find("has no training set"), result.output.rfind("has no training set"))
      << result.output;
}

TEST(DataParallelCli, SigtermToOneRankStopsEveryRankAtTheSameStep) {
  SmallProject project(BatchNorm::frozen);
  const CommandResult result = project.run_then_signal_one_rank("TERM");
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_TRUE(
      contains(result.output, "error: training stopped by an interrupt of another rank at "))
      << result.output;
  EXPECT_TRUE(contains(result.output, "hint: continue with: labpose train")) << result.output;
  ASSERT_EQ(pipeline::list_snapshots(project.train).size(), 1u) << result.output;
  // The saved step continues on one process as it would have on two.
  const CommandResult resumed =
      project.run(1, "--resume --max-iters " +
                         std::to_string(pipeline::list_snapshots(project.train)[0].iteration + 2));
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
}

TEST(DataParallelCli, ARankKilledEndsTheJobWithItsName) {
  SmallProject project(BatchNorm::frozen);
  const CommandResult result = project.run_then_signal_one_rank("KILL");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "that process rank ")) << result.output;
  EXPECT_TRUE(contains(result.output, "signal 9")) << result.output;
}

// A rank that stops answering (SIGSTOP: it neither computes nor answers MPI) ends the job within
// the time limit (here 5 s, plus the roll call's 5 s) with an error that names it.
TEST(DataParallelCli, ARankThatHangsEndsTheJobWithItsName) {
  SmallProject project(BatchNorm::frozen);
  project.mpirun_options = "-x LABPOSE_RANK_TIMEOUT=5";
  const CommandResult result = project.run_then_signal_one_rank("STOP");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "rank 0 of 2: ")) << result.output;
  EXPECT_TRUE(contains(result.output, "waited 5 s: rank 1 did not answer a roll call"))
      << result.output;
}

TEST(DataParallelCli, AnalyzeGivesEachRankItsShareOfTheVideos) {
  const SmallProject project(BatchNorm::frozen);
  ASSERT_EQ(project.run(1, "--max-iters 2").exit_code, 0);
  const fs::path videos = project.dir.path() / "videos";
  fs::create_directories(videos);
  const fs::path clip = project.config.parent_path() / "videos" / "synthetic_mouse.mp4";
  for (const char* name : {"first.mp4", "second.mp4", "third.mp4"}) {
    fs::copy_file(clip, videos / name);
  }
  const fs::path out = project.dir.path() / "tracks";
  const std::string analyze = shell_quote(testing::labpose_binary()) + " analyze " +
                              shell_quote(project.config.string()) + " " +
                              shell_quote(videos.string()) + " --dest " + shell_quote(out.string());
  const std::string mpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
                             shell_quote(LABPOSE_MPIEXEC) + " -np 2 --oversubscribe ";
  CommandResult result = testing::run(mpirun + analyze + " 2>&1");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  std::vector<std::string> tracks;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().extension() == ".h5") tracks.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(tracks.size(), 3u) << result.output;
  // Each video once: rank 0 takes the first and third, rank 1 the second.
  for (const auto& name : tracks) {
    EXPECT_EQ(result.output.find(name), result.output.rfind(name)) << name << result.output;
  }
  EXPECT_TRUE(contains(result.output, "rank 1 of 2: ")) << result.output;

  result = testing::run(mpirun + analyze + " --shard 0/2 2>&1");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(
      contains(result.output, "--shard 0/2 and mpirun (Open MPI) both share out the videos"))
      << result.output;
}

}  // namespace
}  // namespace labpose::testing
