// labpose sweep: a hyperparameter search over a base shuffle. Each trial is an ordinary shuffle
// trained by `labpose train` in a child process, chosen on validation images carved from the
// base's training images (never its test images); grid, random or successive halving (ASHA) with
// rungs resumed from the trial's snapshots; any number of processes (threads here, other commands,
// array tasks on other machines) share the sweep through its lock-protected state; a killed sweep
// continues when run again. The chosen trial's test error is measured once, at the end. Not the
// space (space.hpp), the next job (scheduler.hpp) or the reports (results.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "pipeline/sweep/state.hpp"
#include "projects/config.hpp"
#include "projects/promoted_model.hpp"

namespace labpose::pipeline {

struct SweepOptions {
  std::string name;            // sweeps/<name>/
  std::optional<int> shuffle;  // the base shuffle; default 1 (a sweep's own when it continues)
  std::optional<double> training_fraction;     // default: config.yaml's first (the sweep's own)
  std::optional<std::filesystem::path> space;  // sweep.yaml; needed to start a sweep
  std::optional<std::string> algorithm;        // grid, random or halving
  std::optional<int> trials;
  std::optional<double> minutes_per_trial;  // default 15
  std::optional<std::int64_t> iterations_per_trial;
  std::optional<double> budget_minutes;  // training minutes of all trials together
  int parallel = 1;                      // trials at once in this process
  // One device, or a comma-separated list (cuda:0,cuda:1); default: auto, or what the sweep was
  // started with. Given when a sweep continues, it replaces that (another node, other GPUs).
  std::optional<std::string> devices;
  std::optional<std::uint64_t> seed;                   // draws and the validation images; default 0
  std::optional<double> validation_fraction;           // default 0.15
  std::filesystem::path executable;                    // labpose, which trains each trial
  std::optional<std::filesystem::path> weights_cache;  // ImageNet weights for init_weights
  bool prepare_only = false;                           // create or check the sweep, train nothing
};

/// sweeps/<name>/ of the project.
std::filesystem::path sweep_folder(const projects::ProjectConfig& config, const std::string& name);

/// Creates the sweep (its state and every trial's shuffle, everything checked before the first
/// file is written), or checks that the options given agree with the existing one. Returns its
/// state.
SweepState open_sweep(const projects::ProjectConfig& config, const SweepOptions& options);

struct SweepRun {
  SweepState state;
  bool interrupted = false;  // Ctrl-C or SIGTERM: run the same command again to continue
};

/// Opens the sweep and trains its trials, options.parallel at a time, until none is left (or an
/// interrupt); the process that sees the sweep over measures the chosen trial's test error. The
/// caller installs the InterruptHandler.
SweepRun run_sweep(const projects::ProjectConfig& config, const SweepOptions& options);

/// What --promote changed.
struct Promotion {
  projects::PromotedModel model;
  std::string previous_net_type, net_type;      // config.yaml's default_net_type before, after
  std::optional<std::filesystem::path> backup;  // config.yaml as it was, when it changed
};

/// Makes the chosen trial of a finished sweep the project's model: promoted.yaml names its shuffle
/// (the default of evaluate, analyze and the commands that use their tracks), and config.yaml's
/// default_net_type becomes its network, the DeepLabCut way (the previous file kept as
/// config.yaml.bak). Nothing else changes. Throws while the sweep is not over.
Promotion promote_sweep_trial(projects::ProjectConfig& config, const std::string& name);

/// The state of an existing sweep (for --status); throws naming the sweeps that exist when there
/// is none of that name.
SweepState read_sweep(const projects::ProjectConfig& config, const std::string& name);

}  // namespace labpose::pipeline
