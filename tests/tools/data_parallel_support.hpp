// What the data-parallel tests share: a small demo project to train on one process or on ranks
// under mpirun, its losses and snapshots, and their comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "nets/models/models.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/training/learning_stats.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::testing {

// A demo project with a training set of mobilenet_v2_0.35 on 64x64 crops, batch 4, a loss row
// every step and a test error every `evaluate` steps; `frozen`: the whole backbone frozen (batch
// norm in inference mode: no batch statistics, so the split of a batch changes nothing).
struct SmallProject {
  TempDir dir;
  std::filesystem::path config, train;

  explicit SmallProject(bool frozen, int evaluate = 0) {
    config = demo_project_from_cli(dir.path(), 60, 12);
    const std::string c = shell_quote(config.string());
    const CommandResult made =
        run_labpose("create-dataset " + c + " --net mobilenet_v2_0.35 --weights none");
    EXPECT_EQ(made.exit_code, 0) << made.output;
    const std::filesystem::path models = config.parent_path() / "labpose-models" / "iteration-0";
    for (const auto& entry : std::filesystem::directory_iterator(models))
      train = entry.path() / "train";
    set_yaml_values(train / "pose_cfg.yaml",
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

  // labpose train alone (`ranks` 1) or on `ranks` ranks under mpirun.
  CommandResult run(int ranks, const std::string& arguments,
                    const std::string& device = "cpu") const {
    return testing::run(run_command(ranks, arguments, device));
  }

  std::string run_command(int ranks, const std::string& arguments,
                          const std::string& device = "cpu") const {
    const std::string command = shell_quote(labpose_binary()) + " train " +
                                shell_quote(config.string()) + " --device " + device + " " +
                                arguments;
    if (ranks == 1) return command + " 2>&1";
    return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " +
           shell_quote(LABPOSE_MPIEXEC) + " -np " + std::to_string(ranks) + " --oversubscribe " +
           command + " 2>&1";
  }

  // Two ranks training until one of them (the newer process) gets `signal` once the first loss row
  // is written: a condition, not a time.
  CommandResult run_then_signal_one_rank(const std::string& signal) const {
    const std::string stats = shell_quote((train / "learning_stats.csv").string());
    const std::string ranks = shell_quote("^" + labpose_binary() + " train " + config.string());
    return testing::run("(" + run_command(2, "--max-iters 3000") + ") & job=$!; while [ ! -f " +
                        stats + " ] && kill -0 $job 2>/dev/null; do sleep 0.1; done; kill -" +
                        signal + " $(pgrep -f " + ranks + " | sort -n | tail -1); wait $job");
  }

  // Moves this run's snapshots and learning_stats.csv into `name`/ beside train/.
  std::filesystem::path keep(const std::string& name) const {
    const std::filesystem::path kept = train.parent_path() / name;
    std::filesystem::create_directories(kept);
    for (const auto& entry : std::filesystem::directory_iterator(train)) {
      const std::string file = entry.path().filename().string();
      if (file.starts_with("snapshot-") || file == "learning_stats.csv") {
        std::filesystem::rename(entry.path(), kept / file);
      }
    }
    return kept;
  }
};

inline std::vector<double> losses(const std::filesystem::path& folder) {
  std::vector<double> values;
  for (const auto& row : pipeline::read_learning_stats(folder / "learning_stats.csv")) {
    values.push_back(row.loss);
  }
  return values;
}

// The largest difference between the two snapshots' tensors (they must have the same ones).
inline double largest_difference(const std::filesystem::path& a, const std::filesystem::path& b) {
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

inline void expect_same_losses(const std::vector<double>& alone, const std::vector<double>& ranks,
                               double tolerance) {
  ASSERT_EQ(alone.size(), ranks.size());
  for (std::size_t i = 0; i < alone.size(); ++i) {
    EXPECT_NEAR(ranks[i], alone[i], tolerance * std::abs(alone[i])) << "step " << i + 1;
  }
}

}  // namespace labpose::testing
