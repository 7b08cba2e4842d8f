// What the data-parallel tests share: a small demo project to train on one process or on ranks
// under mpirun, its losses and snapshots, and their comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "nets/models/models.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/training/learning_stats.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::testing {

// How the small project's batch norms train.
enum class BatchNorm {
  frozen,       // the whole backbone frozen: inference mode, no batch statistics
  per_rank,     // batch statistics of each rank's share (the default)
  synchronized  // sync_batch_norm: batch statistics of the whole batch
};

// A demo project with a training set of mobilenet_v2_0.35 on 64x64 crops, batch 4, a loss row
// every step and a test error every `evaluate` steps.
struct SmallProject {
  TempDir dir;
  std::filesystem::path config, train;
  std::string mpirun_options;  // e.g. "--mca btl tcp,self"

  explicit SmallProject(BatchNorm norm, int evaluate = 0) {
    const bool frozen = norm == BatchNorm::frozen;
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
                     {"unfreeze_backbone_after", "0"},
                     {"sync_batch_norm", norm == BatchNorm::synchronized ? "true" : "false"},
                     // The ranks reproduce one process to fp32's round-off; `auto` could train
                     // one run in bf16 and the next in fp32 where a loaded machine measures
                     // its bf16 units as not clearly faster.
                     {"precision", "fp32"}});
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
           mpirun_options + " " + command + " 2>&1";
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

// How far two snapshots' batch-norm running statistics are apart: the largest relative difference
// of a variance, and of a mean in units of its channel's standard deviation.
struct RunningStatistics {
  double variance = 0.0, mean = 0.0;
};

inline RunningStatistics running_statistics_difference(const std::filesystem::path& a,
                                                       const std::filesystem::path& b) {
  const auto first = nets::read_safetensors(a), second = nets::read_safetensors(b);
  RunningStatistics largest;
  for (const auto& [name, tensor] : first.tensors) {
    if (!name.ends_with(".running_var")) continue;
    const std::string mean_name = name.substr(0, name.size() - 3) + "mean";
    const auto& other = second.tensors.at(name).values;
    const auto& mean = first.tensors.at(mean_name).values;
    const auto& other_mean = second.tensors.at(mean_name).values;
    for (std::size_t c = 0; c < tensor.values.size(); ++c) {
      const double v = tensor.values[c], w = other[c];
      largest.variance =
          std::max(largest.variance, std::abs(v - w) / std::max({std::abs(v), std::abs(w), 1e-30}));
      largest.mean =
          std::max(largest.mean, std::abs(double{mean[c]} - other_mean[c]) / std::sqrt(v + 1e-30));
    }
  }
  return largest;
}

// Per trainable tensor that moved, |b - a| / |a - start| over the tensor's values (a and b: two
// runs' weights after the same steps from `start`), sorted. Tensors whose update is 10^4 times
// shorter than the median one are left out: their gradient is 0 in exact arithmetic and their
// update round-off (the shift of a batch norm that only feeds convolutions followed by batch
// norms, which subtract it again).
inline std::vector<double> update_differences(const std::filesystem::path& a,
                                              const std::filesystem::path& b,
                                              const std::filesystem::path& start) {
  const auto first = nets::read_safetensors(a), second = nets::read_safetensors(b),
             initial = nets::read_safetensors(start);
  std::vector<std::pair<double, double>> moved;  // (update length, difference length)
  for (const auto& [name, tensor] : first.tensors) {
    if (name.find("running_") != std::string::npos || name.starts_with("optimizer")) continue;
    const auto& other = second.tensors.at(name).values;
    const auto& from = initial.tensors.at(name).values;
    double update = 0.0, difference = 0.0;
    for (std::size_t i = 0; i < tensor.values.size(); ++i) {
      const double step = double{tensor.values[i]} - from[i];
      const double apart = double{other[i]} - tensor.values[i];
      update += step * step;
      difference += apart * apart;
    }
    if (update > 0.0) moved.emplace_back(std::sqrt(update), std::sqrt(difference));
  }
  if (moved.empty()) return {};
  std::vector<std::pair<double, double>> by_length = moved;
  std::sort(by_length.begin(), by_length.end());
  const double median = by_length[by_length.size() / 2].first;
  std::vector<double> errors;
  for (const auto& [update, difference] : moved) {
    if (update >= 1e-4 * median) errors.push_back(difference / update);
  }
  std::sort(errors.begin(), errors.end());
  return errors;
}

inline void expect_same_losses(const std::vector<double>& alone, const std::vector<double>& ranks,
                               double tolerance) {
  ASSERT_EQ(alone.size(), ranks.size());
  for (std::size_t i = 0; i < alone.size(); ++i) {
    EXPECT_NEAR(ranks[i], alone[i], tolerance * std::abs(alone[i])) << "step " << i + 1;
  }
}

}  // namespace labpose::testing
