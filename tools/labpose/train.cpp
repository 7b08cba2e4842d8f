// labpose train <config> [--shuffle K] [--training-fraction F] [--device D] [--max-iters N]
//   [--display-iters N] [--save-iters N] [--keep-snapshots N] [--batch-size B] [--resume]
//   [--early-stop P] [--seed S] [--weights F]
//   [--freeze-backbone-stages N] [--unfreeze-after K] [--backbone-lr-multiplier X]
//   [--backbone-warmup F] [--schedule time|iterations] [--max-minutes M] [--stop-at-minutes M]
//   [--stop-at-iteration N]
#include <fmt/core.h>

#include <array>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "devices/world.hpp"
#include "pipeline/training/best_snapshot.hpp"
#include "pipeline/training/data_parallel.hpp"
#include "pipeline/training/trainer.hpp"
#include "projects/config.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {
namespace {

struct TrainCommandOptions {
  std::string config, device = "auto";
  int shuffle = 1;
  std::optional<double> training_fraction;
  bool resume = false;
  double max_minutes = 0;
  std::optional<std::string> schedule;
  pipeline::TrainOptions train;
};

// The command on this process: alone, or as one rank of `world`.
int train_rank(const TrainCommandOptions& options, nets::Communicator& world) {
  pipeline::TrainOptions run = options.train;
  double pcutoff = 0.0;
  pipeline::on_every_rank(world, [&] {
    const projects::ProjectConfig config = load_project_config(options.config);
    const projects::ConfigValues& values = config.values();
    const double fraction =
        options.training_fraction ? *options.training_fraction : values.training_fraction.front();
    run.project = config.project_dir();
    run.train_dir = projects::model_train_dir(
        projects::ProjectLayout(run.project)
            .model_dir(values.iteration, values.task, values.date, fraction, options.shuffle));
    pcutoff = values.pcutoff;
    if (!std::filesystem::exists(projects::pose_cfg_in(run.train_dir))) {
      throw Error(
          fmt::format("{} does not exist: shuffle {} with TrainingFraction {} has no training set",
                      projects::pose_cfg_in(run.train_dir).string(), options.shuffle, fraction),
          fmt::format("make it first: labpose create-dataset {} --shuffle {}", options.config,
                      options.shuffle));
    }
  });
  run.device = devices::rank_device(options.device, world);
  run.world = &world;
  run.resume = options.resume;
  run.pcutoff = pcutoff;
  run.max_minutes = options.max_minutes;
  if (options.schedule) {
    run.schedule = *options.schedule == "time" ? pipeline::ScheduleKind::time
                                               : pipeline::ScheduleKind::iterations;
  }
  const InterruptHandler interrupts;
  const pipeline::TrainResult result = pipeline::train(run);
  const std::string best =
      result.best_test_error
          ? fmt::format(
                "; best {} error {:.2f} px ({}; mean of the last {} evaluations)",
                result.held_out == pipeline::HeldOutImages::validation ? "validation" : "test",
                *result.best_test_error, result.best_snapshot.filename().string(),
                pipeline::BestSnapshot::kWindow)
          : std::string();
  switch (result.stop) {
    case pipeline::TrainResult::Stop::finished:
      if (result.schedule_seconds > 0) {
        console::info(
            "finished its {:g}-minute time schedule at iteration {}{}; next: labpose evaluate "
            "{}",
            result.schedule_seconds / 60, result.iterations, best, options.config);
        return 0;
      }
      console::info("trained to iteration {} in {}{}; next: labpose evaluate {}", result.iterations,
                    format_duration(result.seconds), best, options.config);
      return 0;
    case pipeline::TrainResult::Stop::early_stopped:
      console::info("stopped early at iteration {}: the test error stopped improving{}",
                    result.iterations, best);
      return 0;
    case pipeline::TrainResult::Stop::time_limit:
      console::info("stopped at iteration {} after {}{}; continue with --resume", result.iterations,
                    format_duration(result.seconds), best);
      return 0;
    case pipeline::TrainResult::Stop::interrupted:
      break;
  }
  if (world.rank() != 0) return static_cast<int>(ErrorKind::interrupted);  // rank 0 says it
  // A rank of a job stops too when another rank was interrupted.
  const std::string reason =
      interrupt_requested() ? interrupt_reason() : "an interrupt of another rank";
  throw Error(fmt::format("training stopped by {} at iteration {}; saved {}", reason,
                          result.iterations, result.last_snapshot.string()),
              "continue with: labpose train " + options.config + " --resume",
              ErrorKind::interrupted);
}

// One rank of a data-parallel job: rank 0 alone reports, and a usage error, the same on every
// rank, only there. An interrupted job's ranks leave together once rank 0 has said why: the
// launcher ends a job as soon as one of its ranks exits with an error status, which could cut
// rank 0 short before its message.
int train_job_rank(const TrainCommandOptions& options, nets::Communicator& world) {
  int code = 0;
  if (world.rank() == 0) {
    try {
      code = train_rank(options, world);
    } catch (const Error& error) {
      if (error.kind() != ErrorKind::interrupted) throw;
      console::print_error(error.what(), error.hint());
      code = error.exit_code();
    }
  } else {
    console::set_verbosity(console::Verbosity::quiet);
    try {
      code = train_rank(options, world);
    } catch (const pipeline::ReportedByRankZero& error) {
      return error.exit_code();
    } catch (const UsageError&) {
      return static_cast<int>(ErrorKind::usage);
    }
  }
  if (code == static_cast<int>(ErrorKind::interrupted)) {
    std::array<double, 1> said{0.0};
    world.all_reduce(said, nets::ReduceOp::sum);
  }
  return code;
}

}  // namespace

Command train_command() {
  Command command;
  command.name = "train";
  command.summary = "train a pose network on the CPU or a GPU";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<TrainCommandOptions>();
    auto& train = options->train;
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("--shuffle", options->shuffle, "which shuffle to train (default 1)")
        ->check(CLI::PositiveNumber);
    app.add_option("--training-fraction", options->training_fraction,
                   "which TrainingFraction of config.yaml (default: the first)")
        ->check(CLI::Range(0.01, 1.0));
    app.add_option("--device", options->device,
                   "auto (a GPU when there is one, else the CPU), cpu, cuda or cuda:N");
    app.add_option("--max-iters", train.max_iters,
                   "train to this many iterations (default: pose_cfg.yaml's max_iters)")
        ->check(CLI::PositiveNumber);
    app.add_option("--display-iters", train.display_iters,
                   "a learning_stats.csv row and a log line every N iterations (pose_cfg.yaml's "
                   "display_iters)")
        ->check(CLI::PositiveNumber);
    app.add_option("--save-iters", train.save_iters,
                   "a snapshot every N iterations (pose_cfg.yaml's save_iters)")
        ->check(CLI::PositiveNumber);
    app.add_option("--keep-snapshots", train.keep_snapshots,
                   "keep the newest N regular snapshots (pose_cfg.yaml's keep_snapshots; "
                   "DeepLabCut's max_snapshots_to_keep)")
        ->check(CLI::PositiveNumber);
    app.add_option("--batch-size", train.batch_size,
                   "images per step (default: pose_cfg.yaml's batch_size)")
        ->check(CLI::PositiveNumber);
    app.add_flag("--resume", options->resume,
                 "continue from the newest snapshot (exactly as if training had never stopped)");
    app.add_option(
           "--early-stop", train.early_stop_patience,
           "stop when the test error has not improved for this many evaluations (keeps the best)")
        ->check(CLI::NonNegativeNumber);
    app.add_option(
        "--seed", train.seed,
        "random seed of initialization, sampling and augmentation (default: pose_cfg.yaml's)");
    app.add_option(
        "--weights", train.weights,
        "pretrained backbone weights for this run (safetensors, e.g. from labpose weights)");
    app.add_option("--freeze-backbone-stages", train.freeze_backbone_stages,
                   "keep the first N backbone stages fixed (fine-tuning pretrained weights)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--unfreeze-after", train.unfreeze_backbone_after,
                   "train the frozen stages too from this iteration on (pose_cfg.yaml's "
                   "unfreeze_backbone_after; 0: never)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--backbone-lr-multiplier", train.backbone_lr_multiplier,
                   "the backbone's learning rate as a multiple of the head's (pose_cfg.yaml's "
                   "backbone_lr_multiplier)")
        ->check(CLI::Range(0.0, 100.0));
    app.add_option("--backbone-warmup", train.backbone_warmup,
                   "ramp the backbone's learning rate up from 0 over this fraction of the run once "
                   "it trains (pose_cfg.yaml's backbone_warmup; 0: off)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--precision", train.precision,
                   "auto (bf16 on a CPU whose bf16 units are clearly faster than fp32, else "
                   "fp32; tf32 on a GPU), tf32 (fp32 with TF32 convolutions on a GPU of compute "
                   "capability 8.0+, PyTorch's default; fp32 elsewhere), fp32 (strict) or bf16 "
                   "(mixed precision: bf16 convolutions and values between layers, fp32 weights "
                   "and sums; a CPU with bf16 units or a GPU of compute capability 8.0+) "
                   "(pose_cfg.yaml's precision)")
        ->check(CLI::IsMember({"auto", "tf32", "fp32", "bf16"}));
    app.add_option("--schedule", options->schedule,
                   "time: fit the learning-rate drops and the unfreeze to --max-minutes; "
                   "iterations: follow multi_step's iterations (pose_cfg.yaml's schedule)")
        ->check(CLI::IsMember({"time", "iterations"}));
    app.add_option("--max-minutes", options->max_minutes,
                   "train this long: with schedule time the run's length (the learning rate "
                   "decays over it), else a stop with a snapshot (continue with --resume)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--stop-at-minutes", train.stop_at_minutes,
                   "stop (with a snapshot; continue with --resume) once the run has trained this "
                   "many minutes in all, without changing its schedule")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--stop-at-iteration", train.stop_at_iteration,
                   "stop (with a snapshot; continue with --resume) at this iteration, without "
                   "changing the schedule")
        ->check(CLI::NonNegativeNumber);
    app.footer(
        "Trains the shuffle made by create-dataset with the recipe in its train/pose_cfg.yaml. "
        "Snapshots "
        "(snapshot-<iteration>.safetensors) are written every save_iters iterations and when "
        "training "
        "stops, plus snapshot-best-<iteration> whenever the test error improves; "
        "learning_stats.csv "
        "records iteration, loss, learning rate, test error and time. Ctrl-C or SIGTERM saves a "
        "snapshot and exits with status 3; --resume then continues exactly. Under mpirun or srun "
        "every rank trains a replica on its share of each batch (batch_size is the whole batch), "
        "the ranks average their gradients, and rank 0 alone writes.");
    return [options]() {
      // Under mpirun or srun, one rank of a data-parallel job: rank 0 alone reports, and a usage
      // error, the same on every rank, only there.
      const std::unique_ptr<nets::Communicator> world = devices::join_world();
      if (world->size() == 1) return train_rank(*options, *world);
      return train_job_rank(*options, *world);
    };
  };
  return command;
}

}  // namespace labpose::tools
