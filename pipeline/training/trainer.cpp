// The training loop: setup (fresh, pretrained or resumed), the step (next batch, forward, loss,
// backward, optimizer update), statistics, evaluation and snapshots. Not the loss (pose_loss.hpp),
// the learning rates (schedule.hpp), the optimizers and parameter ranges (parameter_groups.hpp) or
// learning_stats.csv's format (learning_stats.hpp).
#include "pipeline/training/trainer.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <thread>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "devices/world.hpp"
#include "nets/models/models.hpp"
#include "nets/optimizers.hpp"
#include "nets/repeated_work.hpp"
#include "nets/safetensors.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/evaluation/animal_matching.hpp"
#include "pipeline/evaluation/errors.hpp"
#include "pipeline/pose/animal_predictor.hpp"
#include "pipeline/pose/candidate_keys.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/pose/predict.hpp"
#include "pipeline/training/best_snapshot.hpp"
#include "pipeline/training/data_parallel.hpp"
#include "pipeline/training/data_wait.hpp"
#include "pipeline/training/gradient_exchange.hpp"
#include "pipeline/training/loader.hpp"
#include "pipeline/training/parameter_groups.hpp"
#include "pipeline/training/pose_loss.hpp"
#include "pipeline/training/schedule.hpp"
#include "pipeline/training/snapshot.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

fs::path snapshot_path(const fs::path& train_dir, std::int64_t iteration, bool best) {
  return train_dir / projects::snapshot_file_name(iteration, best);
}

std::size_t output_index(const nets::Net& net, const std::string& name) {
  const auto& names = net.output_names();
  const auto found = std::find(names.begin(), names.end(), name);
  LABPOSE_ASSERT(found != names.end());
  return static_cast<std::size_t>(found - names.begin());
}

// The newest regular (not best) snapshot in `train_dir`, the one --resume continues.
std::optional<SnapshotFile> newest_snapshot(const fs::path& train_dir) {
  std::optional<SnapshotFile> newest;
  for (const auto& snapshot : list_snapshots(train_dir)) {
    if (!snapshot.best && (!newest || snapshot.iteration > newest->iteration)) newest = snapshot;
  }
  return newest;
}

// Where a backend's tensors live, as snapshots record it beside the precision they trained in.
std::string memory_kind(const nets::Backend& backend) {
  return backend.host_memory() ? "host" : "device";
}

// The precision the snapshot's run trained in, where it trained on `memory` (memory_kind's "host"
// or "device"); none for older snapshots, which do not say, or for a value that is not a training
// precision (measured again then).
std::optional<nets::PlanPrecision> resumed_precision(const SnapshotMetadata& resumed,
                                                     const std::string& memory) {
  const auto precision = resumed.extra.find("precision");
  const auto recorded_memory = resumed.extra.find("precision_memory");
  if (precision == resumed.extra.end() || recorded_memory == resumed.extra.end() ||
      recorded_memory->second != memory)
    return std::nullopt;
  for (const auto trained :
       {nets::PlanPrecision::fp32, nets::PlanPrecision::tf32, nets::PlanPrecision::bf16}) {
    if (precision->second == nets::precision_name(trained)) return trained;
  }
  return std::nullopt;
}

// Whether the labels hold the individuals pose_cfg.yaml names (and "single" for unique bodyparts).
bool same_individuals(const Dataset& dataset, const PoseConfig& pose) {
  std::vector<std::string> individuals = pose.individuals;
  if (pose.multi_animal() && !pose.unique_bodyparts.empty())
    individuals.emplace_back(projects::kUniqueIndividual);
  return dataset.individuals == individuals;
}

class Trainer {
 public:
  explicit Trainer(const TrainOptions& options)
      : options_(options), world_(options.world != nullptr ? *options.world : alone_) {}

  TrainResult run();

 private:
  // Setup, in this order.
  void setup();
  void read_settings();
  void read_training_set();
  LoadedSnapshot read_resumed_snapshot(const std::optional<SnapshotFile>& newest) const;
  void resume_network(const LoadedSnapshot& resumed, const fs::path& file);
  void restore_progress(const SnapshotMetadata& metadata);
  void set_schedule(const std::optional<LoadedSnapshot>& resumed, const fs::path& file);
  void check_resumed_schedule(const fs::path& file) const;
  void build_network(const std::optional<SnapshotFile>& newest);
  void read_earlier_stats();
  BatchGeometry allocate_step_buffers();
  void make_backend(const SnapshotMetadata* resumed);
  std::optional<nets::PlanPrecision> start_in_resumed_precision(const SnapshotMetadata& resumed);
  void agree_on_automatic_precision(std::optional<nets::PlanPrecision> resumed);
  void start_exchange();

  // One step.
  void step();
  const std::vector<nets::Tensor>& forward();
  void backward();
  // What forward and backward are recorded under: the net's tensors and the frozen stages.
  std::int64_t recording_key() const { return net_->generation() * 64 + applied_frozen_stages_; }
  void advance_schedule();
  std::unique_ptr<TrainingBatch> next_batch();
  void exchange_gradients();
  void check_finite(double loss, std::int64_t iteration) const;
  void update_parameters();
  void settle_loss();
  void record_loss(std::int64_t iteration, double loss);

  // Between steps and at the end.
  int frozen_stages() const;
  void apply_frozen_stages();
  std::optional<TrainResult::Stop> stop_requested() const;
  void finish();
  void report_exchange() const;
  void evaluate_test_set();
  double measure_test_error();
  void save(bool best);
  SnapshotMetadata snapshot_metadata() const;
  void remove_old_snapshots(bool best, const fs::path& kept);
  void append_stats_row(bool force);
  std::string progress_detail(double images_per_second, double seconds) const;
  double now() const {
    if (options_.clock) return options_.clock();
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double elapsed() const { return seconds_before_ + now() - started_; }
  // The clock and the interrupt that decide for every rank alike: a process alone reads them now,
  // the ranks of a job take what they agreed after the last step.
  double agreed_elapsed() const { return parallel() ? agreed_.seconds : elapsed(); }
  bool agreed_interrupt() const { return parallel() ? agreed_.interrupted : interrupt_requested(); }
  bool parallel() const { return world_.size() > 1; }
  // The machine's cores, shared evenly by the ranks of a job on it (where the launcher says).
  unsigned cores_of_this_rank() const {
    const unsigned cores = std::thread::hardware_concurrency();
    const int local = parallel() ? devices::launch_from_environment().local_size : 1;
    return local > 1 ? cores / static_cast<unsigned>(local) : cores;
  }
  const char* held_out_name() const {
    return result_.held_out == HeldOutImages::validation ? "validation" : "test";
  }
  bool reached_stop_point(double seconds) const {
    return (options_.stop_at_minutes > 0 && seconds >= options_.stop_at_minutes * 60.0) ||
           (options_.stop_at_iteration > 0 && iteration_ >= options_.stop_at_iteration);
  }
  bool writer() const { return world_.rank() == 0; }
  // Whether this iteration evaluates, writes a stats row or saves a snapshot.
  bool bookkeeping_due() const {
    const auto every = [this](std::int64_t iterations) {
      return iterations > 0 && iteration_ % iterations == 0;
    };
    return every(pose_.evaluate_iters) || every(pose_.display_iters) || every(pose_.save_iters);
  }

  const TrainOptions& options_;
  nets::SingleProcess alone_;
  nets::Communicator& world_;
  BatchSlice slice_;
  std::unique_ptr<nets::Communicator> device_world_;  // GPU ranks: NCCL
  std::unique_ptr<GradientExchange> exchange_;        // ranks of a job only
  StepAgreement agreed_;
  PoseConfig pose_;
  Dataset dataset_;
  std::vector<std::size_t> train_, held_out_;  // held out: the test or the validation images
  std::unique_ptr<nets::Backend> backend_;
  std::unique_ptr<nets::Net> net_;
  std::unique_ptr<nets::Optimizer> optimizer_;
  std::unique_ptr<BatchLoader> loader_;
  int loader_threads_ = 0;
  DataWait data_wait_;  // this sitting's waits for the loader
  ParameterRanges ranges_;
  int applied_frozen_stages_ = 0;  // what ranges_ and the batch norms are set for
  std::size_t score_output_ = 0, locref_output_ = 1;  // indices in the network's outputs
  std::optional<std::size_t> paf_output_;             // a multi-animal network's
  nets::Tensor input_;                                // x: (N, 3, H, W)
  std::unique_ptr<PoseLoss> loss_;
  std::vector<nets::Backend::HostCopy> uploads_;  // a step's batch, reused
  // A step's loss sums on the device and their way to the host, for two steps in turn: the last
  // step's are read while the next one is queued.
  std::array<nets::Tensor, 2> loss_sums_;
  std::array<std::unique_ptr<nets::HostReadback>, 2> loss_readbacks_;
  struct PendingLoss {
    std::int64_t iteration;  // the step's, from 1
    LossScales scales;
    std::size_t slot;  // of loss_sums_ and loss_readbacks_
  };
  std::optional<PendingLoss> pending_loss_;
  std::vector<nets::Tensor> output_gradients_;  // by output: the loss's gradients
  // Forward and backward recorded once and replayed (a GPU's CUDA graphs); op by op on the CPU.
  std::unique_ptr<nets::RepeatedWork> forward_work_, backward_work_;

  std::int64_t iteration_ = 0;
  std::vector<LearningStatsRow> stats_;
  double window_loss_ = 0.0;
  double smoothed_loss_ = 0.0;  // for the progress line
  std::int64_t window_steps_ = 0;
  std::optional<double> test_error_;  // measured at iteration_, not yet in a stats row
  BestSnapshot best_;  // the smoothed test error's minimum, and early stopping's count
  std::optional<TrainingSchedule> schedule_;  // set once the run is known to be fresh or resumed
  double sitting_limit_ = 0.0;                // seconds this sitting may train; 0: no limit
  double seconds_before_ = 0.0;               // training time of the runs this one resumes
  double started_ = now();
  TrainResult result_;
};

// ---- setup ------------------------------------------------------------------------------------

void Trainer::setup() {
  on_every_rank(world_, [&] {
    read_settings();
    read_training_set();
  });
  const std::optional<SnapshotFile> newest = newest_snapshot(options_.train_dir);
  std::optional<LoadedSnapshot> resumed;
  if (options_.resume) resumed = read_resumed_snapshot(newest);
  make_backend(resumed ? &resumed->metadata : nullptr);
  if (resumed) {
    resume_network(*resumed, newest->path);
  } else {
    build_network(newest);
  }
  set_schedule(resumed, newest ? newest->path : fs::path());
  broadcast_parameters(world_, *net_);
  apply_frozen_stages();
  optimizer_ = make_optimizer(*backend_, pose_, net_->trainable_count());
  if (resumed) {
    optimizer_->restore(resumed->optimizer_state, newest->path);
    read_earlier_stats();
  }
  const BatchGeometry geometry = allocate_step_buffers();
  loader_threads_ =
      loader_threads_for(pose_.loader_threads, !backend_->host_memory(), cores_of_this_rank());
  loader_ = std::make_unique<BatchLoader>(dataset_, train_, options_.project, pose_, geometry,
                                          iteration_, loader_threads_);
  if (parallel()) start_exchange();
  if (parallel() && pose_.sync_batch_norm) synchronize_batch_norms(*net_, world_);
  result_.first_iteration = iteration_;
  console::info(
      "training {} on {} ({}){}: {} training and {} {} images, batch {} of {}x{}, {} iterations",
      pose_.net_type, backend_->name(), backend_->description(),
      backend_->training_precision() == nets::PlanPrecision::bf16
          ? "; mixed precision: bf16 convolutions and values between layers, fp32 weights, "
            "sums and losses"
          : "",
      train_.size(), held_out_.size(), held_out_name(), pose_.batch_size, pose_.crop_width,
      pose_.crop_height, pose_.max_iters);
  if (parallel()) {
    console::info(
        "data-parallel over {}: each rank takes {} images of every batch of {}; batch "
        "norm statistics {}",
        (device_world_ ? *device_world_ : world_).description(), slice_.batch, pose_.batch_size,
        pose_.sync_batch_norm ? "over the whole batch (sync_batch_norm)"
                              : "per rank (sync_batch_norm: false)");
  }
  console::info("{}", schedule_->description());
}

// The backend of the device, computing in pose_cfg.yaml's precision. Mixed precision is bf16, on
// the CPU (bf16 units) and on a GPU of compute capability 8.0 or later; a precision a device does
// not train in (fp16) is refused, not ignored. `auto`, the default, is bf16 on a CPU whose bf16
// units are clearly faster than its fp32 ones (every backbone trains faster in it there:
// docs/precision.md), else fp32, and tf32 on a GPU, as PyTorch trains there by default.
// A run resumed in `auto` keeps the precision its snapshot trained in, where it trained on the
// same kind of device, without measuring again.
void Trainer::make_backend(const SnapshotMetadata* resumed) {
  const nets::PlanPrecision asked = devices::parse_plan_precision(pose_.precision);
  std::optional<nets::PlanPrecision> kept;
  if (asked == nets::PlanPrecision::automatic && resumed)
    kept = start_in_resumed_precision(*resumed);
  if (!backend_)
    backend_ = devices::make_backend(options_.device, asked, devices::Purpose::training);
  if (asked == nets::PlanPrecision::automatic) agree_on_automatic_precision(kept);
  if (backend_->training_precision() != backend_->plan_precision()) {
    throw UsageError(
        fmt::format("precision {}: {} does not train in {}; mixed-precision training is bf16 "
                    "(a CPU with bf16 units, or a GPU of compute capability 8.0 or later)",
                    pose_.precision, backend_->name(), pose_.precision),
        "set precision: bf16 (or tf32, fp32) in train/pose_cfg.yaml, or pass --precision bf16");
  }
  result_.precision = backend_->training_precision();
}

// The backend in the precision the resumed run trained in, where it trained on the kind of device
// that --device names (auto: a GPU where one is usable, else the CPU), so the CPU is not measured
// again; that precision (tf32 is fp32 on a GPU without TF32 units), or none, with no backend
// made, where the snapshot does not say or the device cannot train in it.
std::optional<nets::PlanPrecision> Trainer::start_in_resumed_precision(
    const SnapshotMetadata& resumed) {
  const std::string& device = options_.device;
  const std::optional<nets::PlanPrecision> recorded =
      resumed_precision(resumed, devices::device_kind(device).gpu ? "device" : "host");
  if (!recorded) return std::nullopt;
  try {
    backend_ = devices::make_backend(device, *recorded, devices::Purpose::training);
  } catch (const Error& error) {  // a run moved to a CPU without bf16 units
    console::warn(
        "the run being resumed trained in {}, which --device {} cannot ({}); precision "
        "auto chooses again",
        nets::precision_name(*recorded), device, error.what());
    return std::nullopt;
  }
  const nets::PlanPrecision kept = backend_->training_precision();
  console::info("precision auto: {}, as the run being resumed trained", nets::precision_name(kept));
  return kept;
}

// `auto` resolved: the precision of the run being resumed where it has one; else the device's
// choice for training (tf32 on a GPU, the measured one on the CPU). Rank 0's for every rank of a
// job, so that no two ranks train in different precisions where the measure is close; a rank
// whose backend already computes in it is not remade.
void Trainer::agree_on_automatic_precision(std::optional<nets::PlanPrecision> resumed) {
  nets::PlanPrecision chosen = resumed.value_or(backend_->training_precision());
  if (parallel()) world_.broadcast(std::as_writable_bytes(std::span(&chosen, 1)), 0);
  on_every_rank(world_, [&] {  // a rank without bf16 units says so, and every rank stops
    if (chosen != backend_->training_precision())
      backend_ = devices::make_backend(backend_->name(), chosen);
  });
}

// The gradients' exchange of a rank of a job: over the world's MPI for host memory, over the
// device's own communicator (NCCL) for a GPU's.
void Trainer::start_exchange() {
  device_world_ = devices::device_communicator(world_, *backend_);
  exchange_ = std::make_unique<GradientExchange>(device_world_ ? *device_world_ : world_,
                                                 net_->trainable_gradients());
  agreed_.seconds = seconds_before_;
}

// pose_cfg.yaml with the command line's overrides.
void Trainer::read_settings() {
  const fs::path pose_file = projects::pose_cfg_in(options_.train_dir);
  std::vector<std::string> warnings;
  pose_ = read_pose_config(pose_file, &warnings);
  for (const auto& warning : warnings) console::warn("{}", warning);
  if (options_.max_iters) pose_.max_iters = *options_.max_iters;
  if (options_.display_iters) pose_.display_iters = *options_.display_iters;
  if (options_.save_iters) pose_.save_iters = *options_.save_iters;
  if (options_.keep_snapshots) pose_.keep_snapshots = *options_.keep_snapshots;
  if (options_.batch_size) pose_.batch_size = *options_.batch_size;
  if (options_.early_stop_patience) pose_.early_stop_patience = *options_.early_stop_patience;
  if (options_.seed) pose_.seed = *options_.seed;
  if (options_.freeze_backbone_stages)
    pose_.freeze_backbone_stages = *options_.freeze_backbone_stages;
  if (options_.unfreeze_backbone_after)
    pose_.unfreeze_backbone_after = *options_.unfreeze_backbone_after;
  if (options_.backbone_lr_multiplier)
    pose_.backbone_lr_multiplier = *options_.backbone_lr_multiplier;
  if (options_.backbone_warmup) pose_.backbone_warmup = *options_.backbone_warmup;
  if (options_.schedule) pose_.schedule = *options_.schedule;
  if (options_.weights) pose_.init_weights = *options_.weights;
  if (options_.precision) pose_.precision = *options_.precision;
  check_pose_config(pose_, pose_file);
  slice_ = batch_slice(pose_.batch_size, world_, pose_file);
}

// The labels and the saved split.
void Trainer::read_training_set() {
  const fs::path& project = options_.project;
  dataset_ = read_dataset(project / pose_.dataset, project);
  if (dataset_.bodyparts != pose_.bodyparts || !same_individuals(dataset_, pose_)) {
    throw Error(fmt::format("{} lists other bodyparts or individuals than {}",
                            (project / pose_.dataset).string(),
                            projects::pose_cfg_in(options_.train_dir).string()),
                "make the training set again: labpose create-dataset <config.yaml>");
  }
  const fs::path split_file = project / pose_.split;
  const Split split = read_split(split_file);
  train_ = indices_of(dataset_, split.train, split_file);
  if (!split.validation.empty()) {
    // A sweep's trial: chosen on its validation images; the test images wait for the chosen one.
    result_.held_out = HeldOutImages::validation;
    held_out_ = indices_of(dataset_, split.validation, split_file);
    console::info(
        "errors during training are measured on the {} validation images of {}, not on "
        "the {} test images",
        held_out_.size(), split_file.filename().string(), split.test.size());
    return;
  }
  held_out_ = indices_of(dataset_, split.test, split_file);
  const std::string note =
      small_test_set_note(held_out_.size(), options_.train_dir.parent_path().filename().string());
  if (!note.empty() && pose_.evaluate_iters > 0) {
    console::warn("{}; the best snapshot is the one with the lowest mean over {} evaluations", note,
                  BestSnapshot::kWindow);
  }
}

// The newest snapshot, which --resume continues and which must match pose_cfg.yaml.
LoadedSnapshot Trainer::read_resumed_snapshot(const std::optional<SnapshotFile>& newest) const {
  if (!newest) {
    throw Error(
        fmt::format("there is no snapshot to resume from in {}", options_.train_dir.string()),
        "start training without --resume");
  }
  LoadedSnapshot resumed = read_snapshot(newest->path);
  if (resumed.metadata.architecture != pose_.net_type ||
      resumed.metadata.bodyparts != pose_.bodyparts ||
      resumed.metadata.multi_animal != multi_animal_model(pose_)) {
    throw Error(
        fmt::format("{} is a {} with bodyparts [{}], but pose_cfg.yaml asks for a {} with [{}]",
                    newest->path.string(), resumed.metadata.architecture,
                    fmt::join(resumed.metadata.bodyparts, ", "), pose_.net_type,
                    fmt::join(pose_.bodyparts, ", ")),
        "resume in the shuffle the snapshot belongs to, or start a new shuffle");
  }
  return resumed;
}

// The network and the loop's counters from the snapshot read_resumed_snapshot read from `file`.
void Trainer::resume_network(const LoadedSnapshot& resumed, const fs::path& file) {
  net_ = load_snapshot_network(*backend_, resumed, file);
  restore_progress(resumed.metadata);
  console::info("resuming from {} (iteration {})", file.filename().string(), iteration_);
}

// The iteration, training time, loss window and early-stopping counters that snapshot_metadata()
// saved; warns where the rest of the run will differ from an uninterrupted one.
void Trainer::restore_progress(const SnapshotMetadata& metadata) {
  iteration_ = metadata.iteration;
  const auto& meta = metadata.extra;
  if (meta.count("seed") != 0 && std::stoull(meta.at("seed")) != pose_.seed) {
    console::warn(
        "resuming with seed {} although the snapshot was trained with seed {}; the rest of the "
        "run "
        "differs from an uninterrupted one",
        pose_.seed, meta.at("seed"));
  }
  if (meta.count("batch_size") != 0 && std::stoi(meta.at("batch_size")) != pose_.batch_size) {
    console::warn(
        "resuming with batch size {} although the snapshot was trained with {}; the rest of "
        "the run differs from an uninterrupted one",
        pose_.batch_size, meta.at("batch_size"));
  }
  seconds_before_ = exact_number(meta, "seconds", 0.0);
  window_loss_ = exact_number(meta, "loss_window_sum", 0.0);
  window_steps_ = static_cast<std::int64_t>(exact_number(meta, "loss_window_steps", 0.0));
  best_.restore(meta);
}

// The schedule and this sitting's time limit: a fresh run's from pose_cfg.yaml and --max-minutes
// (the time schedule's budget); a resumed run keeps its snapshot's (`file`), --max-minutes then
// only stopping this sitting early.
void Trainer::set_schedule(const std::optional<LoadedSnapshot>& resumed, const fs::path& file) {
  const double minutes = options_.max_minutes * 60.0;
  if (resumed) {
    schedule_ = TrainingSchedule::resumed(pose_, resumed->metadata.extra, iteration_);
    sitting_limit_ = minutes;
    check_resumed_schedule(file);
  } else {
    const bool timed = pose_.schedule == ScheduleKind::time && minutes > 0;
    schedule_.emplace(pose_, timed ? minutes : 0.0);
    sitting_limit_ = timed ? 0.0 : minutes;
  }
  if (schedule_->timed() && pose_.unfreeze_backbone_after > pose_.max_iters) {
    throw UsageError(
        fmt::format("{}: unfreeze_backbone_after ({}) must be at most max_iters ({}) with "
                    "schedule: time, which reads it as a fraction of max_iters",
                    projects::pose_cfg_in(options_.train_dir).string(),
                    pose_.unfreeze_backbone_after, pose_.max_iters),
        "lower unfreeze_backbone_after, or use schedule: iterations");
  }
}

// Says how the resumed schedule differs from what the command line asks; refuses a run that is
// over.
void Trainer::check_resumed_schedule(const fs::path& file) const {
  if (options_.schedule && (*options_.schedule == ScheduleKind::time) != schedule_->timed()) {
    console::warn("--schedule {} is ignored: a resumed run keeps the schedule it started with",
                  schedule_name(*options_.schedule));
  }
  if (schedule_->timed() && sitting_limit_ > 0) {
    console::info(
        "the run keeps its time schedule of {:g} minutes ({} done); --max-minutes {:g} only "
        "stops this sitting early",
        schedule_->budget_seconds() / 60, format_duration(seconds_before_), options_.max_minutes);
  }
  if (!schedule_->finished(iteration_, seconds_before_)) return;
  if (schedule_->timed()) {
    throw UsageError(fmt::format("{} has finished its time schedule of {:g} minutes (iteration {})",
                                 file.string(), schedule_->budget_seconds() / 60, iteration_),
                     "evaluate it (labpose evaluate); to train again, delete the snapshots");
  }
  throw UsageError(fmt::format("{} is already at iteration {} (max_iters is {})", file.string(),
                               iteration_, pose_.max_iters),
                   "train longer with --max-iters N");
}

// A fresh network: seeded initialization, the pretrained backbone when given. Refuses to start
// over a run's snapshots.
void Trainer::build_network(const std::optional<SnapshotFile>& newest) {
  if (newest) {
    throw Error(
        fmt::format("{} already holds snapshots (up to iteration {})", options_.train_dir.string(),
                    newest->iteration),
        "continue them with --resume, or delete the snapshots to train again from the start");
  }
  const auto multi_animal = multi_animal_model(pose_);
  net_ = nets::build_pose_net(*backend_,
                              {pose_.net_type, static_cast<int>(pose_.bodyparts.size()), true},
                              multi_animal ? multi_animal->heads() : nets::MultiAnimalHeads{});
  nets::initialize_pose_net(*net_, pose_.seed);
  if (!pose_.init_weights.empty()) {
    fs::path weights = pose_.init_weights;
    if (weights.is_relative() && !fs::exists(weights)) weights = options_.project / weights;
    nets::load_weights(*net_, nets::read_safetensors(weights), nets::LoadScope::backbone, weights);
    console::info("backbone initialized from {}", weights.string());
  }
}

// learning_stats.csv's rows up to the resumed iteration (a later row is from after the snapshot).
void Trainer::read_earlier_stats() {
  const fs::path stats_file = options_.train_dir / "learning_stats.csv";
  if (!fs::exists(stats_file)) return;
  for (const auto& row : read_learning_stats(stats_file)) {
    if (row.iteration <= iteration_) stats_.push_back(row);
  }
}

// The device buffers a step uses, allocated once: the input, the loss's targets and gradients.
// Returns the batches' geometry (crops and the network's output grid) for the loader.
BatchGeometry Trainer::allocate_step_buffers() {
  BatchGeometry geometry;
  geometry.batch = slice_.batch;
  geometry.global_batch = pose_.batch_size;
  geometry.first_sample = slice_.first;
  geometry.height = pose_.crop_height;
  geometry.width = pose_.crop_width;
  geometry.joints = static_cast<int>(pose_.bodyparts.size());
  const nets::Shape input_shape{geometry.batch, 3, geometry.height, geometry.width};
  const auto output_shapes = net_->output_shapes(input_shape);
  score_output_ = output_index(*net_, "scoremap");
  locref_output_ = output_index(*net_, "locref");
  const nets::Shape& score_shape = output_shapes[score_output_];  // (N, J, P, Q)
  geometry.output_height = static_cast<int>(score_shape.h());
  geometry.output_width = static_cast<int>(score_shape.w());
  input_ = backend_->allocate(input_shape);
  std::optional<MultiAnimalLoss> multi_animal;
  if (pose_.multi_animal()) {
    multi_animal = MultiAnimalLoss{std::nullopt, pose_.pairwise_loss_weight};
    if (!pose_.paf_graph.empty()) {
      paf_output_ = output_index(*net_, "paf");
      multi_animal->pafs = output_shapes[*paf_output_];
    }
  }
  loss_ =
      std::make_unique<PoseLoss>(*backend_, score_shape, output_shapes[locref_output_],
                                 pose_.location_refinement, pose_.locref_loss_weight, multi_animal);
  output_gradients_.assign(output_shapes.size(), nets::Tensor());
  output_gradients_[score_output_] = loss_->score_gradient();
  output_gradients_[locref_output_] = loss_->locref_gradient();
  if (paf_output_) output_gradients_[*paf_output_] = loss_->paf_gradient();
  for (std::size_t k = 0; k < loss_sums_.size(); ++k) {
    loss_sums_[k] = backend_->allocate_flat(3);
    loss_readbacks_[k] = backend_->make_readback(3);
  }
  forward_work_ = std::make_unique<nets::RepeatedWork>(*backend_, "the training step's forward");
  backward_work_ = std::make_unique<nets::RepeatedWork>(*backend_, "the training step's backward");
  return geometry;
}

// ---- one step ---------------------------------------------------------------------------------

// One step in the algorithm's order: the next batch, forward, the loss and its gradient with
// respect to the outputs, backward, the optimizer's update. Alone, the step's loss is read a step
// later (settle_loss()), so that the host queues the next step while the device still works on
// this one; the ranks of a job agree on it at once.
void Trainer::step() {
  advance_schedule();
  std::unique_ptr<TrainingBatch> batch = next_batch();
  const std::vector<nets::Tensor>& outputs = forward();
  // A rank's means divide by the ranks' mean counts of weighted values, so that the ranks' losses
  // and gradients average to the whole batch's.
  std::optional<LossCounts> counts;
  if (parallel()) {
    const LossCounts own = loss_->counts(*batch);
    std::array<double, 3> sums{own.score, own.locref, own.paf};
    world_.all_reduce(sums, nets::ReduceOp::sum);
    const auto ranks = static_cast<double>(world_.size());
    counts = LossCounts{sums[0] / ranks, sums[1] / ranks, sums[2] / ranks};
  }
  const std::size_t slot = static_cast<std::size_t>(iteration_ % 2);
  const LossScales scales = loss_->queue_forward_backward(
      outputs[score_output_], outputs[locref_output_],
      paf_output_ ? &outputs[*paf_output_] : nullptr, *batch, counts, loss_sums_[slot]);
  loader_->recycle(std::move(batch));
  loss_readbacks_[slot]->start(loss_sums_[slot]);
  if (parallel()) {
    const double loss = scales.loss(loss_readbacks_[slot]->values());
    exchange_gradients();
    agreed_ = agree_after_step(world_, loss, elapsed(), interrupt_requested());
    check_finite(agreed_.loss, iteration_ + 1);
    update_parameters();
    ++iteration_;
    record_loss(iteration_, agreed_.loss);
    return;
  }
  backward();
  update_parameters();
  ++iteration_;
  // The previous step's loss, done by now on the device; then this one's waits for the next.
  settle_loss();
  pending_loss_ = PendingLoss{iteration_, scales, slot};
  // A test's hook sees every step's loss as the step ends.
  if (options_.on_step) settle_loss();
}

// The step's forward. Alone, recorded once and replayed while the network's tensors and its frozen
// stages stay the same (nets/repeated_work.hpp); a rank of a job runs op by op, as its backward
// hands each bucket of gradients to the exchange as soon as it is final.
const std::vector<nets::Tensor>& Trainer::forward() {
  if (parallel()) return net_->forward(input_, true);
  net_->prepare(input_.shape(), true);
  forward_work_->run(recording_key(), [this] { net_->forward(input_, true); });
  return net_->output_values();
}

// The step's backward, alone (see forward()).
void Trainer::backward() {
  backward_work_->run(recording_key(), [this] { net_->backward(output_gradients_); });
}

// Reads the loss of the step whose sums are still on their way, checks it and counts it.
void Trainer::settle_loss() {
  if (!pending_loss_) return;
  const PendingLoss pending = *pending_loss_;
  pending_loss_.reset();
  const double loss = pending.scales.loss(loss_readbacks_[pending.slot]->values());
  check_finite(loss, pending.iteration);
  record_loss(pending.iteration, loss);
}

// Backward, with each bucket of gradients sent to the other ranks as soon as it is final; returns
// with every gradient the ranks' mean.
void Trainer::exchange_gradients() {
  exchange_->begin(ranges_.frozen_end);
  net_->backward(output_gradients_, [this](std::int64_t offset) { exchange_->ready_from(offset); });
  exchange_->finish();
}

// The schedule at this step: its drops and unfreeze logged, the frozen stages applied.
void Trainer::advance_schedule() {
  for (const auto& line : schedule_->advance(iteration_, agreed_elapsed())) {
    console::info("{}", line);
  }
  if (frozen_stages() != applied_frozen_stages_) apply_frozen_stages();
}

// The step's batch from the loader: its images to the network's input and its targets to the
// loss's, in one upload.
std::unique_ptr<TrainingBatch> Trainer::next_batch() {
  const double asked = now();
  std::unique_ptr<TrainingBatch> batch = loader_->next();
  data_wait_.add(now() - asked);
  uploads_.clear();
  uploads_.push_back({batch->images.data(), &input_});
  loss_->add_target_copies(*batch, uploads_);
  backend_->copy_all_from_host(uploads_);
  return batch;
}

void Trainer::check_finite(double loss, std::int64_t iteration) const {
  if (std::isfinite(loss)) return;
  throw Error(fmt::format("the training loss became {} at iteration {}", loss, iteration),
              "lower the learning rates in pose_cfg.yaml (multi_step) and resume from the last "
              "snapshot with --resume");
}

// The optimizer's update: the backbone's unfrozen part at its rate (backbone_lr_multiplier times
// the rate, warming up), then the head at the rate; the frozen stages are left as they are.
void Trainer::update_parameters() {
  const double rate = schedule_->rate();
  const double backbone_rate = schedule_->backbone_rate();
  if (options_.on_rates) options_.on_rates(iteration_ + 1, rate, backbone_rate);
  const std::int64_t head_begin = std::max(ranges_.frozen_end, ranges_.head_begin);
  nets::Tensor& values = net_->trainable_values();
  const nets::Tensor& gradients = net_->trainable_gradients();
  optimizer_->update(values, gradients, ranges_.frozen_end, head_begin,
                     static_cast<float>(backbone_rate), iteration_ + 1);
  optimizer_->update(values, gradients, head_begin, ranges_.count, static_cast<float>(rate),
                     iteration_ + 1);
}

void Trainer::record_loss(std::int64_t iteration, double loss) {
  window_loss_ += loss;
  ++window_steps_;
  smoothed_loss_ = smoothed_loss_ == 0.0 ? loss : 0.9 * smoothed_loss_ + 0.1 * loss;
  if (options_.on_step) options_.on_step(iteration, loss);
}

// ---- between steps and at the end -------------------------------------------------------------

// The stages frozen now: freeze_backbone_stages until the schedule unfreezes them, then none. The
// schedule keeps the iteration of the switch, so a run resumed on either side is the same run.
int Trainer::frozen_stages() const {
  return schedule_->backbone_frozen() ? pose_.freeze_backbone_stages : 0;
}

void Trainer::apply_frozen_stages() {
  applied_frozen_stages_ = frozen_stages();
  ranges_ = parameter_ranges(*net_, pose_.net_type, applied_frozen_stages_);
  set_frozen_batch_norms(*net_, pose_.net_type, applied_frozen_stages_);
}

// Why the loop stops, checked after each step: the schedule's end (max_iters or the time budget),
// early stopping, an interrupt or this sitting's time limit.
std::optional<TrainResult::Stop> Trainer::stop_requested() const {
  const double seconds = agreed_elapsed();
  if (schedule_->finished(iteration_, seconds)) return TrainResult::Stop::finished;
  if (pose_.early_stop_patience > 0 &&
      best_.evaluations_without_improvement() >= pose_.early_stop_patience) {
    return TrainResult::Stop::early_stopped;
  }
  if (agreed_interrupt()) return TrainResult::Stop::interrupted;
  if (sitting_limit_ > 0 && seconds - seconds_before_ >= sitting_limit_) {
    return TrainResult::Stop::time_limit;
  }
  if (reached_stop_point(seconds)) return TrainResult::Stop::time_limit;
  return std::nullopt;
}

// The last iteration always gets a snapshot and a stats row (and, when training finished or ran
// out of time, a test error).
void Trainer::finish() {
  settle_loss();
  const bool ended =
      result_.stop == TrainResult::Stop::finished || result_.stop == TrainResult::Stop::time_limit;
  if (ended && pose_.evaluate_iters > 0 && iteration_ % pose_.evaluate_iters != 0) {
    evaluate_test_set();
  }
  append_stats_row(true);
  if (result_.last_snapshot.empty() ||
      result_.last_snapshot != snapshot_path(options_.train_dir, iteration_, false)) {
    save(false);
  }
  result_.iterations = iteration_;
  result_.best_test_error = best_.best();
  if (!best_.best()) result_.best_snapshot.clear();
  result_.seconds = elapsed() - seconds_before_;
  result_.schedule_seconds = schedule_->budget_seconds();
}

// The test error, measured by rank 0 and shared, so that every rank keeps the same best and
// early-stopping count; the ranks check their replicas agree at the same time.
void Trainer::evaluate_test_set() {
  if (held_out_.empty()) return;
  double error = std::nan("");
  if (writer()) error = measure_test_error();
  if (parallel()) {
    world_.broadcast(std::as_writable_bytes(std::span<double>(&error, 1)), 0);
    check_replicas_agree(world_, *net_, iteration_);
  }
  if (std::isnan(error)) return;
  test_error_ = error;
  result_.last_test_error = error;
  if (best_.observe(error)) save(true);
}

// The mean error on the held-out images; a multi-animal model's after its animals are assembled
// and matched to the labeled ones.
double Trainer::measure_test_error() {
  DecodeSettings decode;
  decode.stride = pose_.stride;
  decode.locref_stdev = pose_.locref_stdev;
  decode.location_refinement = pose_.location_refinement;
  std::vector<std::vector<KeypointPrediction>> predictions;
  if (const auto model = multi_animal_model(pose_)) {
    MapAssemblySettings settings = project_assembly_settings(*model, decode);
    read_candidate_keys(test_pose_cfg_of(projects::pose_cfg_in(options_.train_dir)),
                        settings.candidates);
    AnimalPredictor predictor(*backend_, *net_, *model, static_cast<int>(pose_.bodyparts.size()),
                              settings);
    predictions = predict_animal_slots(predictor, dataset_, held_out_, options_.project);
  } else {
    ImagePredictor predictor(*backend_, *net_, decode);  // compiled from the current parameters
    predictions = predict_images(predictor, dataset_, held_out_, options_.project);
  }
  return summarize_errors(dataset_, held_out_, predictions, options_.pcutoff).mean;
}

void Trainer::save(bool best) {
  if (!writer()) return;
  const SnapshotMetadata metadata = snapshot_metadata();
  const fs::path file = snapshot_path(options_.train_dir, iteration_, best);
  write_snapshot(file, *net_, optimizer_->save(), metadata);
  if (best) {
    result_.best_snapshot = file;
    result_.best_test_error = best_.best();
  } else {
    result_.last_snapshot = file;
  }
  remove_old_snapshots(best, file);
}

// What a snapshot needs beyond the parameters: the network's identity, and the loop's state that
// restore_progress() reads back so a resumed run continues exactly.
SnapshotMetadata Trainer::snapshot_metadata() const {
  SnapshotMetadata metadata;
  metadata.iteration = iteration_;
  metadata.architecture = pose_.net_type;
  metadata.bodyparts = pose_.bodyparts;
  metadata.training_fraction = pose_.training_fraction;
  metadata.shuffle = pose_.shuffle;
  metadata.test_rmse = test_error_;
  metadata.multi_animal = multi_animal_model(pose_);
  auto& extra = metadata.extra;
  extra["optimizer"] = pose_.optimizer;
  extra["seed"] = std::to_string(pose_.seed);
  extra["batch_size"] = std::to_string(pose_.batch_size);
  extra["seconds"] = exact_number(elapsed());
  extra["loss_window_sum"] = exact_number(window_loss_);
  extra["loss_window_steps"] = std::to_string(window_steps_);
  extra["precision"] = nets::precision_name(backend_->training_precision());
  extra["precision_memory"] = memory_kind(*backend_);
  best_.save(extra);
  schedule_->save(extra);
  return metadata;
}

// A snapshot and what was derived from it beside it (int8's calibration).
void remove_snapshot(const fs::path& snapshot) {
  fs::remove(snapshot);
  std::error_code error;
  fs::remove(int8_calibration_file(snapshot), error);
}

// Once `kept` is safely written: one best snapshot (the previous best goes), or the newest
// keep_snapshots regular ones.
void Trainer::remove_old_snapshots(bool best, const fs::path& kept) {
  if (best) {
    for (const auto& old : list_snapshots(options_.train_dir)) {
      if (old.best && old.path != kept) remove_snapshot(old.path);
    }
    return;
  }
  std::vector<SnapshotFile> regular;
  for (const auto& snapshot : list_snapshots(options_.train_dir)) {
    if (!snapshot.best) regular.push_back(snapshot);
  }
  const auto keep = static_cast<std::size_t>(std::max(pose_.keep_snapshots, 1));
  for (std::size_t i = 0; i + keep < regular.size(); ++i) remove_snapshot(regular[i].path);
}

void Trainer::append_stats_row(bool force) {
  if (!writer()) return;  // rank 0 alone keeps learning_stats.csv
  const bool display = pose_.display_iters > 0 && iteration_ % pose_.display_iters == 0;
  if (!display && !test_error_ && !force) return;
  if (window_steps_ == 0) {
    // Nothing new since the last row; an evaluation done after it (when training stops) joins it.
    if (test_error_ && !stats_.empty() && stats_.back().iteration == iteration_ &&
        !stats_.back().test_error) {
      stats_.back().test_error = test_error_;
      write_learning_stats(options_.train_dir / "learning_stats.csv", stats_, result_.held_out);
    }
    return;
  }
  LearningStatsRow row;
  row.iteration = iteration_;
  row.loss = window_loss_ / static_cast<double>(window_steps_);
  row.learning_rate = schedule_->rate();  // the last step's
  row.test_error = test_error_;
  row.seconds = elapsed();
  stats_.push_back(row);
  window_loss_ = 0.0;
  window_steps_ = 0;
  write_learning_stats(options_.train_dir / "learning_stats.csv", stats_, result_.held_out);
}

// The progress line's detail; by time, with what is left of the schedule instead of an ETA.
// `seconds`: this sitting's training so far.
std::string Trainer::progress_detail(double images_per_second, double seconds) const {
  std::string detail =
      fmt::format("iter {}  loss {:.5f}  {:.1f} images/s{}", iteration_, smoothed_loss_,
                  images_per_second, data_wait_.progress_text(seconds));
  if (schedule_->timed()) {
    detail += fmt::format("  {} left of the {:g}-minute schedule",
                          format_duration(std::max(schedule_->budget_seconds() - elapsed(), 0.0)),
                          schedule_->budget_seconds() / 60);
  }
  if (best_.best()) {
    detail += fmt::format("  best {} {:.2f} px (mean of {} evaluations)", held_out_name(),
                          *best_.best(), BestSnapshot::kWindow);
  }
  return detail;
}

TrainResult Trainer::run() {
  setup();
  // By time the number of iterations is not known in advance (no bar; the detail tells the time).
  Progress progress("training", schedule_->timed() ? 0 : pose_.max_iters - iteration_,
                    "iterations");
  const double start = now();
  const std::int64_t first = iteration_;
  if (reached_stop_point(seconds_before_)) {
    // Resumed at or past its stop point (a sweep's rung, reached by a sitting that stopped before
    // its evaluation): evaluated and saved, nothing trained.
    console::info("iteration {} is at the stop point already: nothing to train", iteration_);
    result_.stop = TrainResult::Stop::time_limit;
    progress.finish();
    finish();
    return result_;
  }
  for (;;) {  // setup() refuses a run that is over: there is at least one step to take
    step();
    // Nothing is evaluated, logged or saved on a loss not yet read and checked.
    if (bookkeeping_due()) settle_loss();
    test_error_.reset();
    if (pose_.evaluate_iters > 0 && iteration_ % pose_.evaluate_iters == 0) evaluate_test_set();
    append_stats_row(false);
    if (pose_.save_iters > 0 && iteration_ % pose_.save_iters == 0) save(false);
    progress.advance();
    const double seconds = now() - start;
    progress.set_detail(progress_detail(
        seconds > 0 ? static_cast<double>((iteration_ - first) * pose_.batch_size) / seconds : 0,
        seconds));
    if (const auto stop = stop_requested()) {
      result_.stop = *stop;
      break;
    }
  }
  progress.finish();
  finish();
  if (exchange_ && exchange_->steps() > 0) report_exchange();
  if (const std::string advice =
          data_wait_.advice(now() - start, loader_threads_, std::thread::hardware_concurrency());
      !advice.empty())
    console::warn("{}", advice);
  return result_;
}

// How long the gradients' exchange took per step, and how much of it backward hid.
void Trainer::report_exchange() const {
  const auto steps = static_cast<double>(exchange_->steps());
  const double exchange = exchange_->exchange_seconds() / steps;
  const double waited = exchange_->waited_seconds() / steps;
  const double hidden = exchange > 0 ? std::clamp(1.0 - waited / exchange, 0.0, 1.0) : 1.0;
  console::info(
      "gradient exchange: {:.1f} ms per step, {:.1f} ms of it waited for after backward ({:.0f} % "
      "hidden behind backward)",
      exchange * 1e3, waited * 1e3, hidden * 100);
}

}  // namespace

TrainResult train(const TrainOptions& options) {
  Trainer trainer(options);
  return trainer.run();
}

}  // namespace labpose::pipeline
