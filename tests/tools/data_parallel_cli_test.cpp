// labpose train on two ranks under mpirun (label `mpi`), on the CPU: the same training as one
// process where the batch has no batch statistics, replicas that stay identical where it has,
// resuming across rank counts, and a batch the ranks cannot share.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "nets/models/models.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/training/learning_stats.hpp"
#include "pipeline/training/snapshot.hpp"
#include "tests/support/test_support.hpp"

namespace labpose {
namespace {
namespace fs = std::filesystem;
using testing::CommandResult;
using testing::contains;
using testing::shell_quote;
using testing::TempDir;

// A batch computed whole and its two halves computed apart and averaged differ by float round-off
// only: the sums over the batch are added in another order (float addition is not associative),
// and the kernels may block a batch of 2 differently from one of 4. Relative to the loss, which
// learning_stats.csv writes to 6 significant digits:
constexpr double kLossTolerance = 1e-5;
// For the weights after 30 AdamW steps (measured: 7e-10 on a 2-core AVX-512 machine; round-off of
// 1e-7 relative in a gradient moves a weight by about that much of one step of 1e-3 at most):
constexpr double kWeightTolerance = 1e-6;

// A demo project with a training set of mobilenet_v2_0.35 on 64x64 crops, batch 4, a loss row
// every step and a test error every `evaluate` steps; `frozen`: the whole backbone frozen (batch
// norm in inference mode: no batch statistics, so the split of a batch changes nothing).
struct SmallProject {
  TempDir dir;
  fs::path config, train;

  explicit SmallProject(bool frozen, int evaluate = 0) {
    config = testing::demo_project_from_cli(dir.path(), 60, 12);
    const std::string c = shell_quote(config.string());
    const CommandResult made =
        testing::run_labpose("create-dataset " + c + " --net mobilenet_v2_0.35 --weights none");
    EXPECT_EQ(made.exit_code, 0) << made.output;
    const fs::path models = config.parent_path() / "labpose-models" / "iteration-0";
    for (const auto& entry : fs::directory_iterator(models)) train = entry.path() / "train";
    testing::set_yaml_values(
        train / "pose_cfg.yaml",
        {{"crop_size", "[64, 64]"},
         {"batch_size", "4"},
         {"display_iters", "1"},
         {"evaluate_iters", std::to_string(evaluate)},
         {"save_iters", "100000"},
         {"schedule", "iterations"},
         {"freeze_backbone_stages",
          frozen ? std::to_string(nets::backbone_stages("mobilenet_v2_0.35")) : "0"},
         {"unfreeze_backbone_after", "0"}});
  }

  CommandResult run(int ranks, const std::string& arguments) const {
    return testing::run(run_command(ranks, arguments));
  }

  std::string run_command(int ranks, const std::string& arguments) const {
    const std::string command = shell_quote(testing::labpose_binary()) + " train " +
                                shell_quote(config.string()) + " --device cpu " + arguments;
    if (ranks == 1) return command + " 2>&1";
    return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
           shell_quote(LABPOSE_MPIEXEC) + " -np " + std::to_string(ranks) + " --oversubscribe " +
           command + " 2>&1";
  }

  // Two ranks training until one of them (the newer process) gets `signal` once the first loss row
  // is written: a condition, not a time.
  CommandResult run_then_signal_one_rank(const std::string& signal) const {
    const std::string stats = shell_quote((train / "learning_stats.csv").string());
    const std::string ranks =
        shell_quote("^" + testing::labpose_binary() + " train " + config.string());
    return testing::run("(" + run_command(2, "--max-iters 3000") + ") & job=$!; while [ ! -f " +
                        stats + " ] && kill -0 $job 2>/dev/null; do sleep 0.1; done; kill -" +
                        signal + " $(pgrep -f " + ranks + " | sort -n | tail -1); wait $job");
  }

  // Moves this run's snapshots and learning_stats.csv into `name`/ beside train/.
  fs::path keep(const std::string& name) const {
    const fs::path kept = train.parent_path() / name;
    fs::create_directories(kept);
    for (const auto& entry : fs::directory_iterator(train)) {
      const std::string file = entry.path().filename().string();
      if (file.starts_with("snapshot-") || file == "learning_stats.csv") {
        fs::rename(entry.path(), kept / file);
      }
    }
    return kept;
  }
};

std::vector<double> losses(const fs::path& folder) {
  std::vector<double> values;
  for (const auto& row : pipeline::read_learning_stats(folder / "learning_stats.csv")) {
    values.push_back(row.loss);
  }
  return values;
}

// The largest difference between the two snapshots' tensors (they must have the same ones).
double largest_difference(const fs::path& a, const fs::path& b) {
  const auto first = nets::read_safetensors(a), second = nets::read_safetensors(b);
  EXPECT_EQ(first.tensors.size(), second.tensors.size());
  double largest = 0.0;
  for (const auto& [name, tensor] : first.tensors) {
    const auto found = second.tensors.find(name);
    if (found == second.tensors.end()) {
      ADD_FAILURE() << name << " is missing from " << b;
      continue;
    }
    EXPECT_EQ(tensor.values.size(), found->second.values.size()) << name;
    for (std::size_t i = 0; i < std::min(tensor.values.size(), found->second.values.size()); ++i) {
      largest = std::max(largest, std::abs(double{tensor.values[i]} - found->second.values[i]));
    }
  }
  return largest;
}

void expect_same_losses(const std::vector<double>& alone, const std::vector<double>& ranks) {
  ASSERT_EQ(alone.size(), ranks.size());
  for (std::size_t i = 0; i < alone.size(); ++i) {
    EXPECT_NEAR(ranks[i], alone[i], kLossTolerance * std::abs(alone[i])) << "step " << i + 1;
  }
}

TEST(DataParallelCli, TwoRanksTrainAsOneProcessWithTheWholeBatch) {
  const SmallProject project(true);
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
  expect_same_losses(losses(alone), losses(ranks));
  EXPECT_LE(
      largest_difference(alone / "snapshot-30.safetensors", ranks / "snapshot-30.safetensors"),
      kWeightTolerance);
}

TEST(DataParallelCli, ResumingChangesTheRankCountButNotTheRun) {
  const SmallProject project(true);
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
    expect_same_losses(losses(alone), losses(resumed));
    EXPECT_LE(
        largest_difference(alone / "snapshot-8.safetensors", resumed / "snapshot-8.safetensors"),
        kWeightTolerance)
        << first << " then " << then << " ranks";
  }
}

TEST(DataParallelCli, WithBatchStatisticsPerRankTheReplicasStayTheSameAndLearn) {
  // Every 10 steps the ranks compare checksums of their replicas; training stops with an error
  // when they differ, so finishing is the check.
  const SmallProject project(false, 10);
  const CommandResult result = project.run(2, "--max-iters 30");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const std::vector<double> loss = losses(project.train);
  ASSERT_GE(loss.size(), 30u);
  const double first = (loss[0] + loss[1] + loss[2]) / 3;
  const double last = (loss[loss.size() - 1] + loss[loss.size() - 2] + loss[loss.size() - 3]) / 3;
  EXPECT_LT(last, 0.75 * first) << "the loss falls";
}

TEST(DataParallelCli, ABatchTheRanksCannotShareIsRefusedByRankZero) {
  const SmallProject project(true);
  const CommandResult result = project.run(2, "--max-iters 2 --batch-size 3");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "batch_size 3 cannot be shared evenly by 2 ranks"))
      << result.output;
  EXPECT_TRUE(contains(result.output, "--batch-size 2")) << result.output;
  EXPECT_EQ(result.output.find("cannot be shared"), result.output.rfind("cannot be shared"))
      << "said once\n"
      << result.output;
}

TEST(DataParallelCli, SigtermToOneRankStopsEveryRankAtTheSameStep) {
  SmallProject project(true);
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
  SmallProject project(true);
  const CommandResult result = project.run_then_signal_one_rank("KILL");
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_TRUE(contains(result.output, "that process rank ")) << result.output;
  EXPECT_TRUE(contains(result.output, "signal 9")) << result.output;
}

}  // namespace
}  // namespace labpose
