// labpose sweep <config> --space sweep.yaml [--name N] [--shuffle K] [--algo grid|random|halving]
//   [--trials T] [--minutes-per-trial M | --iterations-per-trial I | --budget-minutes B]
//   [--parallel P] [--devices cpu|cuda:0,cuda:1,...] [--slurm-array] [--seed S]
//   [--validation-fraction F]; labpose sweep <config> --name N --status|--promote;
//   labpose sweep --example
#include <fmt/core.h>

#include <iostream>
#include <map>

#include "core/atomic_file.hpp"

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "pipeline/sweep/results.hpp"
#include "pipeline/sweep/space.hpp"
#include "pipeline/sweep/sweep.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {
namespace {
namespace fs = std::filesystem;

struct SweepCommandOptions {
  std::string config;
  bool example = false, status = false, slurm_array = false, promote = false;
  pipeline::SweepOptions sweep;
};

// How many trials are in each state, in words.
std::string state_counts(const pipeline::SweepState& state) {
  std::map<std::string, int> counts;
  for (const auto& trial : state.trials) ++counts[pipeline::trial_state_name(trial.state)];
  std::string text;
  for (const auto& name : {"done", "running", "stopped", "waiting", "failed"}) {
    if (counts[name] == 0) continue;
    if (!text.empty()) text += ", ";
    text += fmt::format("{} {}", counts[name], name);
  }
  return text;
}

// sweeps/<name>/slurm-array.sh: `tasks` array tasks, each running the sweep's next jobs.
fs::path write_slurm_script(const projects::ProjectConfig& config,
                            const pipeline::SweepOptions& options, const std::string& labpose,
                            int tasks) {
  const fs::path folder = pipeline::sweep_folder(config, options.name);
  const std::string devices = options.devices.value_or("auto");
  const bool gpu = devices.find("cuda") != std::string::npos;
  std::string text = fmt::format(
      "#!/bin/bash\n"
      "# labpose sweep {0}: each array task trains the sweep's next trials until none is left;\n"
      "# the tasks share sweeps/{0}/state.json (keep the project on a shared file system).\n"
      "# Submit with: sbatch {1}\n"
      "#SBATCH --job-name=labpose-sweep-{0}\n"
      "#SBATCH --array=1-{2}\n"
      "#SBATCH --output={3}/logs/slurm-%A_%a.out\n",
      options.name, (folder / "slurm-array.sh").string(), tasks, folder.string());
  if (gpu) text += "#SBATCH --gres=gpu:1\n";
  text += fmt::format("cd {}\nexec {} sweep {} --name {} --devices {}\n",
                      config.project_dir().string(), labpose, config.file().string(), options.name,
                      gpu ? "cuda:0" : (devices == "auto" ? "auto" : "cpu"));
  const fs::path script = folder / "slurm-array.sh";
  write_file_atomically(script, text);
  fs::permissions(script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
  return script;
}

int run_sweep_command(SweepCommandOptions& options) {
  if (options.example) {
    std::cout << pipeline::example_space_text();
    return 0;
  }
  if (options.config.empty()) {
    throw UsageError("labpose sweep needs the project's config.yaml",
                     "labpose sweep <config.yaml> --space sweep.yaml");
  }
  auto& sweep = options.sweep;
  if (sweep.name.empty()) {
    if (!sweep.space) {
      throw UsageError("say which sweep: --name N (or start one with --space sweep.yaml)");
    }
    sweep.name = sweep.space->stem().string();
  }
  const projects::ProjectConfig config = load_project_config(options.config);
  if (options.status) {
    const pipeline::SweepState state = pipeline::read_sweep(config, sweep.name);
    std::cout << fmt::format("sweep {}: {} over {} trials ({})\n", state.name, state.algorithm,
                             state.trials.size(), state_counts(state))
              << pipeline::results_table(state);
    return 0;
  }
  if (options.promote) {
    projects::ProjectConfig editable = config;
    const pipeline::Promotion promotion = pipeline::promote_sweep_trial(editable, sweep.name);
    console::info(
        "shuffle {} (trial {} of sweep {}) is now the project's model: evaluate, analyze, "
        "filter, labeled-video, plot-trajectories and extract-outliers use it without "
        "--shuffle ({})",
        promotion.model.shuffle, promotion.model.trial, sweep.name,
        projects::promoted_model_file(config).string());
    if (promotion.backup) {
      console::info(
          "config.yaml: default_net_type {} -> {} (the network of new shuffles); the "
          "previous file is kept as {}",
          promotion.previous_net_type, promotion.net_type, promotion.backup->string());
    }
    return 0;
  }
  sweep.executable = fs::read_symlink("/proc/self/exe");
  sweep.weights_cache = pipeline::weights_cache_dir();
  if (options.slurm_array) {
    sweep.prepare_only = true;
    pipeline::run_sweep(config, sweep);
    const fs::path script =
        write_slurm_script(config, sweep, sweep.executable.string(), sweep.parallel);
    std::cout << read_file(script) << std::flush;
    console::info("wrote {}; submit it with: sbatch {}", script.string(), script.string());
    return 0;
  }
  const InterruptHandler interrupts;
  const pipeline::SweepRun run = pipeline::run_sweep(config, sweep);
  if (run.interrupted) {
    throw Error(
        fmt::format("the sweep stopped by {} ({}); finished trials are kept", interrupt_reason(),
                    state_counts(run.state)),
        fmt::format("continue it with: labpose sweep {} --name {}", options.config, sweep.name),
        ErrorKind::interrupted);
  }
  std::cout << pipeline::results_table(run.state) << std::flush;
  console::info("results: {}",
                (pipeline::sweep_folder(config, sweep.name) / "results.csv").string());
  return 0;
}

}  // namespace

Command sweep_command() {
  Command command;
  command.name = "sweep";
  command.summary = "search hyperparameters: train trials, choose on validation images";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<SweepCommandOptions>();
    auto& sweep = options->sweep;
    app.add_option("config", options->config, "the project's config.yaml");
    app.add_option("--space", sweep.space,
                   "the search space (sweep.yaml: pose_cfg.yaml keys with values or ranges)");
    app.add_option("--name", sweep.name,
                   "the sweep's name: its folder sweeps/<name>/ (default: the space file's name)");
    app.add_option("--shuffle", sweep.shuffle,
                   "the shuffle whose images and recipe the trials "
                   "start from (default 1)")
        ->check(CLI::PositiveNumber);
    app.add_option("--training-fraction", sweep.training_fraction,
                   "which TrainingFraction of config.yaml (default: the first)")
        ->check(CLI::Range(0.01, 1.0));
    app.add_option("--algo", sweep.algorithm,
                   "grid (every combination), random, or halving (successive halving; the "
                   "default for more than 8 trials)")
        ->check(CLI::IsMember({"grid", "random", "halving"}));
    app.add_option("--trials", sweep.trials, "how many trials random and halving draw")
        ->check(CLI::Range(1, 100000));
    app.add_option("--minutes-per-trial", sweep.minutes_per_trial,
                   "each trial's training time, its schedule fitted to it (default 15)")
        ->check(CLI::PositiveNumber);
    app.add_option("--iterations-per-trial", sweep.iterations_per_trial,
                   "each trial's length in iterations instead (runs that repeat exactly)")
        ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
    app.add_option("--budget-minutes", sweep.budget_minutes,
                   "the training minutes of all trials together: sets how many trials run")
        ->check(CLI::PositiveNumber);
    app.add_option("--parallel", sweep.parallel,
                   "trials at once, one per device of --devices (CPU trials share the cores)")
        ->check(CLI::Range(1, 1024));
    app.add_option("--devices", sweep.devices,
                   "where trials train: auto, cpu, or a list such as cuda:0,cuda:1");
    app.add_flag("--slurm-array", options->slurm_array,
                 "prepare the sweep and write sweeps/<name>/slurm-array.sh, an sbatch array of "
                 "--parallel tasks that share it; train nothing here");
    app.add_option("--seed", sweep.seed,
                   "seed of the draws and of the validation images "
                   "(default 0)");
    app.add_option("--validation-fraction", sweep.validation_fraction,
                   "share of the shuffle's training images held out to choose trials (default "
                   "0.15)")
        ->check(CLI::Range(0.01, 0.9));
    app.add_flag("--status", options->status, "print the sweep's table and exit");
    app.add_flag("--promote", options->promote,
                 "make the chosen trial of the finished sweep the project's model (the default "
                 "shuffle of evaluate and analyze; config.yaml's default_net_type, the previous "
                 "file kept as config.yaml.bak)");
    app.add_flag("--example", options->example, "print a commented sweep.yaml to start from");
    app.footer(
        "Each trial is an ordinary shuffle (labpose-models/.../<Task><date>-trainset<P>shuffle<S>) "
        "trained by labpose train on the base shuffle's training images less the validation "
        "images, with its schedule fitted to the trial's budget. Trials are compared on the "
        "validation images only; the chosen trial's test error is measured once, at the end. "
        "Halving trains every trial to a first rung and continues the best third from its "
        "snapshot at each rung. Kill the sweep (or lose a node) and run the same command again: "
        "finished trials are kept, unfinished ones resume. Results: sweeps/<name>/results.csv, "
        "best.yaml, logs/.");
    return [options]() { return run_sweep_command(*options); };
  };
  return command;
}

}  // namespace labpose::tools
