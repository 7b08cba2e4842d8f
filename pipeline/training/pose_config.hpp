// A shuffle's training configuration: labpose-models/.../train/pose_cfg.yaml. create-dataset writes
// it with every parameter (DeepLabCut's names and defaults where they exist, labpose's own
// otherwise); train and evaluate read it; the user edits it to change the recipe. Not config.yaml.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pipeline/pose/multi_animal_model.hpp"
#include "pipeline/training/multi_loss_weights.hpp"

namespace labpose::pipeline {

/// How multi_step and unfreeze_backbone_after are read: `time` fits them, as fractions of
/// max_iters, to train's --max-minutes (by iterations without one); `iterations` as they are.
enum class ScheduleKind { time, iterations };

/// "time" or "iterations", as pose_cfg.yaml writes it.
std::string_view schedule_name(ScheduleKind kind);

struct PoseConfig {
  // What is trained on what (create-dataset fills these in).
  std::string net_type = "mobilenet_v2_0.35";  // a nets::pose_architectures() name
  std::string init_weights;  // pretrained backbone (safetensors); empty: from scratch
  std::string project_path;
  std::string dataset;      // merged CollectedData .h5, relative to project_path
  std::string metadataset;  // Documentation_data-...pickle, relative to project_path
  std::string split;        // labpose-split-...json, relative to project_path
  double training_fraction = 0.95;
  int shuffle = 1;
  int iteration = 0;                   // active-learning iteration
  std::vector<std::string> bodyparts;  // all_joints_names; all_joints is derived
  std::vector<std::pair<std::string, std::string>> symmetric_pairs;  // swapped by horizontal flips

  // Several animals (DeepLabCut's multi-animal keys; empty individuals: one animal). bodyparts
  // then lists the multianimalbodyparts, then the uniquebodyparts.
  std::vector<std::string> individuals;        // config.yaml's, without "single"
  std::vector<std::string> unique_bodyparts;   // the last of bodyparts
  std::vector<std::pair<int, int>> paf_graph;  // partaffinityfield_graph: multi-animal bodyparts
  double pafwidth = kMultiPafWidth;            // PAF band width, pixels
  double pairwise_loss_weight = kMultiPafLossWeight;  // the PAF loss's weight
  int num_idchannel = 0;  // identity channels: one per individual with identity: true
  bool multi_animal() const { return !individuals.empty(); }

  // Optimization.
  std::string optimizer = "adamw";  // "adamw" or "sgd" (momentum)
  int batch_size = 8;
  std::vector<std::pair<double, std::int64_t>> multi_step = {
      {1e-3, 6000}, {3e-4, 9000}, {1e-4, 10000}};
  std::int64_t max_iters = 10000;  // the last multi_step entry's end when not given
  double weight_decay = 1e-4;
  double momentum = 0.9;
  std::int64_t display_iters = 100;   // learning_stats.csv rows
  std::int64_t save_iters = 1000;     // snapshots
  std::int64_t evaluate_iters = 500;  // test-set RMSE (0: never)
  int keep_snapshots = 5;             // the newest ones are kept, plus the best
  int early_stop_patience = 0;        // evaluations without improvement before stopping (0: off)
  std::uint64_t seed = 42;
  int freeze_backbone_stages = 0;            // first backbone stages not trained (fine-tuning)
  std::int64_t unfreeze_backbone_after = 0;  // iterations after which they train too (0: never)
  double backbone_lr_multiplier = 1.0;       // the backbone's learning rate / the head's
  ScheduleKind schedule = ScheduleKind::time;
  double backbone_warmup = 0.0;  // fraction of the run over which the backbone's rate ramps from 0
  bool sync_batch_norm = false;  // ranks of a job: batch statistics over the whole batch
  // "auto" (bf16 on a CPU whose bf16 units are clearly faster than fp32, else fp32; tf32 on a GPU),
  // "tf32" (fp32; a GPU of compute capability 8.0+ multiplies convolutions on TF32 tensor cores, as
  // PyTorch does by default; elsewhere exactly fp32), "fp32" (strict fp32 on every device) or
  // "bf16" (mixed precision: bf16 convolutions, fp32 weights, batch norm and losses; a CPU with
  // bf16 units or a GPU of compute capability 8.0+).
  std::string precision = "auto";

  // Targets and loss (DeepLabCut's single-animal recipe).
  int stride = 8;
  double pos_dist_thresh = 17.0;  // score-map disk radius in pixels, scaled with the augmentation
  double locref_stdev = 7.2801;
  double locref_loss_weight = 0.05;
  bool location_refinement = true;

  // Augmentation.
  // The training crop (crop_size) around the labeled animal. 256 trains 1.6x the iterations of 320
  // in the same time, and reached a lower error on openfield by 10 minutes (docs/benchmarks.md).
  int crop_width = 256, crop_height = 256;
  double global_scale = 1.0;
  double scale_jitter_lo = 0.5, scale_jitter_up = 1.25;
  double rotation = 25.0;    // degrees
  double rotateratio = 0.4;  // probability of a rotation
  bool mirror = false;       // horizontal flips (with symmetric_pairs swapped)
  double brightness = 0.25;  // max relative change
  double contrast = 0.25;    // max relative change
  double blur_probability = 0.25;
  double noise_probability = 0.25;
  double noise_stddev = 8.0;  // gray levels
  int loader_threads = 2;

  /// The learning rate at training step `step` (0-based) from multi_step.
  double learning_rate(std::int64_t step) const;
};

/// The multi-animal heads pose_cfg.yaml describes; nullopt for a single-animal model.
std::optional<MultiAnimalModel> multi_animal_model(const PoseConfig& config);

/// Reads pose_cfg.yaml; unknown keys are kept out (a warning each), wrong types are Errors naming
/// file:line:col and the key.
PoseConfig read_pose_config(const std::filesystem::path& file,
                            std::vector<std::string>* warnings = nullptr);
/// The same from `text`, with `file` naming the place in messages.
PoseConfig parse_pose_config(const std::string& text, const std::filesystem::path& file,
                             std::vector<std::string>* warnings = nullptr);
/// Whether read_pose_config knows `key`.
bool is_pose_config_key(const std::string& key);
/// What train refuses in a configuration that reads: counts below 1, an unknown network, more
/// frozen stages than the backbone has, a negative unfreeze point, a warm-up outside [0, 1).
/// Throws UsageError naming `file`.
void check_pose_config(const PoseConfig& pose, const std::filesystem::path& file);
/// The fine-tuning recipe for a pretrained backbone, from its row of the backbone table
/// (nets::Backbone::fine_tuning; docs/training.md): the whole backbone frozen, its batch norms in
/// inference mode, for the first tenth of the run (of the time under the time schedule), then
/// trained at the head's learning rate.
void use_fine_tuning_defaults(PoseConfig& pose);
/// Writes pose_cfg.yaml atomically, every key with a comment line per group.
void write_pose_config(const PoseConfig& config, const std::filesystem::path& file);
/// The text write_pose_config writes (to compare with a file the user may have edited).
std::string pose_config_text(const PoseConfig& config);
/// The smaller test/pose_cfg.yaml (what DeepLabCut keeps there): dataset, joints, net_type, ...
void write_test_pose_config(const PoseConfig& config, const std::filesystem::path& file);
std::string test_pose_config_text(const PoseConfig& config);

}  // namespace labpose::pipeline
