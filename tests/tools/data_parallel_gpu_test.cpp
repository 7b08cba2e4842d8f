// labpose train on two GPU ranks under mpirun (label `gpu`; skipped without two usable GPUs): the
// gradients averaged with NCCL give the training of one process with the whole batch, and
// sync_batch_norm its batch statistics.
#include <gtest/gtest.h>

#include "devices/devices.hpp"
#include "tests/support/test_support.hpp"
#include "tests/tools/data_parallel_support.hpp"

namespace labpose::testing {
namespace {

// cuDNN may choose other algorithms for a batch of 2 than for one of 4, and sums on the GPU in an
// order of its own: round-off as on the CPU, a little larger.
constexpr double kLossTolerance = 1e-4;
constexpr double kWeightTolerance = 1e-5;

TEST(DataParallelGpu, TwoGpuRanksTrainAsOneGpuWithTheWholeBatch) {
  if (const std::string problem = devices::device_problem("cuda:1"); !problem.empty()) {
    GTEST_SKIP() << "needs two usable GPUs: " << problem;
  }
  const SmallProject project(BatchNorm::frozen);
  CommandResult result = project.run(1, "--max-iters 30", "cuda:0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto alone = project.keep("alone");
  result = project.run(2, "--max-iters 30", "auto");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "data-parallel over NCCL")) << result.output;
  const auto ranks = project.keep("ranks");
  expect_same_losses(losses(alone), losses(ranks), kLossTolerance);
  EXPECT_LE(
      largest_difference(alone / "snapshot-30.safetensors", ranks / "snapshot-30.safetensors"),
      kWeightTolerance);
}

// As data_parallel_cli_test.cpp's sync_batch_norm check, on two GPUs: at learning rate 0 the
// losses and running statistics come from the statistics the ranks share alone (not chaotic).
TEST(DataParallelGpu, WithSyncBatchNormTwoGpuRanksNormalizeAsOneGpu) {
  if (const std::string problem = devices::device_problem("cuda:1"); !problem.empty()) {
    GTEST_SKIP() << "needs two usable GPUs: " << problem;
  }
  SmallProject project(BatchNorm::synchronized);
  set_yaml_values(project.train / "pose_cfg.yaml", {{"multi_step", "[[0.0, 10000]]"}});
  CommandResult result = project.run(1, "--max-iters 30", "cuda:0");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const auto alone = project.keep("alone");
  result = project.run(2, "--max-iters 30", "auto");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "batch norm statistics over the whole batch"))
      << result.output;
  const auto ranks = project.keep("ranks");
  expect_same_losses(losses(alone), losses(ranks), kLossTolerance);
  const RunningStatistics difference = running_statistics_difference(
      alone / "snapshot-30.safetensors", ranks / "snapshot-30.safetensors");
  EXPECT_LE(difference.variance, 1e-3);
  EXPECT_LE(difference.mean, 1e-3);
}

}  // namespace
}  // namespace labpose::testing
