// The training loop of `labpose train`: a shuffle's pose_cfg.yaml, its merged labels and saved
// split in; snapshots, learning_stats.csv and the best model out. DeepLabCut's loss (sigmoid
// cross-entropy on score maps + locref_loss_weight x Huber on location refinement, and for several
// animals PAFs and identity: pose_loss.hpp), AdamW or SGD with momentum on a multi-step
// schedule, optional frozen backbone stages, periodic test error, early stopping, a learning-rate
// schedule by iterations or fitted to a time budget (schedule.hpp), and exact continuation: a run
// interrupted (Ctrl-C, SIGTERM, a time limit) and resumed gives the same losses as one that never
// stopped. Runs on any backend, alone or as
// one rank of a data-parallel job (data_parallel.hpp). Not the data loader (loader.hpp) and not
// evaluation files (labpose evaluate).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "nets/communicator.hpp"
#include "pipeline/training/learning_stats.hpp"
#include "pipeline/training/pose_config.hpp"

namespace labpose::pipeline {

struct TrainOptions {
  std::filesystem::path project;  // the project folder (where config.yaml is)
  // The data-parallel job this process is a rank of (devices::join_world()); null: alone. Each rank
  // takes its slice of every batch, the ranks average their gradients, and rank 0 alone writes.
  nets::Communicator* world = nullptr;
  std::filesystem::path train_dir;  // labpose-models/.../train (pose_cfg.yaml inside)
  std::string device = "cpu";
  bool resume = false;   // continue from the newest snapshot in train_dir
  double pcutoff = 0.6;  // config.yaml's, for the test error with likelihood cut-off
  // Overrides of pose_cfg.yaml (unset: the file's value).
  std::optional<std::int64_t> max_iters;
  std::optional<std::int64_t> display_iters, save_iters;
  std::optional<int> keep_snapshots;
  std::optional<int> batch_size;
  std::optional<int> early_stop_patience;
  std::optional<std::uint64_t> seed;
  std::optional<int> freeze_backbone_stages;
  std::optional<std::int64_t> unfreeze_backbone_after;
  std::optional<double> backbone_lr_multiplier;
  std::optional<double> backbone_warmup;
  std::optional<ScheduleKind> schedule;  // a resumed run keeps its snapshot's
  std::optional<std::string> weights;    // pretrained backbone (safetensors)
  std::optional<std::string> precision;  // tf32, fp32, bf16 or auto (pose_cfg.yaml's precision)
  // Minutes of training time: the time schedule's budget, else (by iterations, or a resumed time
  // schedule) a stop with a snapshot, as an interrupt; 0: none.
  double max_minutes = 0.0;
  // Stop points of this sitting, whatever the schedule: once the run's training time (resumed
  // sittings included) reaches stop_at_minutes, or its iteration reaches stop_at_iteration, it
  // stops with a snapshot as at a time limit, to be continued with `resume` (a sweep's rungs);
  // 0: none.
  double stop_at_minutes = 0.0;
  std::int64_t stop_at_iteration = 0;
  /// The training clock in seconds (elapsed time, the time schedule and the time limit); empty:
  /// std::chrono::steady_clock. Tests simulate a machine of a given speed with it.
  std::function<double()> clock;
  /// Called after each step with the iteration count and the step's loss (tests, benchmarks).
  std::function<void(std::int64_t iteration, double loss)> on_step;
  /// Called at each step's update with its number (from 1) and the head's and backbone's rates.
  std::function<void(std::int64_t iteration, double rate, double backbone_rate)> on_rates;
};

struct TrainResult {
  enum class Stop {
    finished,       // reached max_iters, or spent the time schedule's budget
    early_stopped,  // the test error stopped improving
    interrupted,    // Ctrl-C or SIGTERM (core/interrupt.hpp)
    time_limit,     // max_minutes (a run by iterations or a resumed time schedule), or a stop point
  };
  Stop stop = Stop::finished;        // a snapshot of the last iteration is saved in every case
  std::int64_t first_iteration = 0;  // where this run started (0, or the resumed snapshot's)
  std::int64_t iterations = 0;       // steps done in total when it stopped
  std::filesystem::path last_snapshot;
  std::filesystem::path best_snapshot;    // empty when the test error was never measured
  std::optional<double> best_test_error;  // the best running mean of test errors (BestSnapshot)
  std::optional<double> last_test_error;
  // What the two errors above were measured on: the test images, or a sweep trial's validation
  // images (the split's `validation`).
  HeldOutImages held_out = HeldOutImages::test;
  double seconds = 0.0;           // wall time of this run
  double schedule_seconds = 0.0;  // the time schedule's budget; 0: by iterations
  // What the steps computed in: pose_cfg.yaml's precision, `auto` resolved (fp32, tf32 or bf16).
  nets::PlanPrecision precision = nets::PlanPrecision::fp32;
};

/// Trains until the schedule's end, early stopping, an interrupt or the time limit; the caller
/// installs the InterruptHandler. Errors name the file or setting at fault.
TrainResult train(const TrainOptions& options);

}  // namespace labpose::pipeline
