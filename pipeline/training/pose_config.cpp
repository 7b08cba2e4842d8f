// pose_cfg.yaml reading and writing.
#include "pipeline/training/pose_config.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "nets/models/backbones.hpp"
#include "nets/models/models.hpp"
#include "projects/yaml_reader.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using projects::yaml_text::all_joints_text;
using projects::yaml_text::quote_string;
using projects::yaml_text::quoted_list;
using projects::yaml_text::yaml_float_text;

double PoseConfig::learning_rate(std::int64_t step) const {
  for (const auto& [rate, until] : multi_step) {
    if (step < until) return rate;
  }
  return multi_step.empty() ? 1e-3 : multi_step.back().first;
}

std::string_view schedule_name(ScheduleKind kind) {
  return kind == ScheduleKind::time ? "time" : "iterations";
}

namespace {

std::string yes_no(bool value) {
  return value ? "true" : "false";
}

// Every key pose_cfg.yaml may hold, in the order it is written.
const std::set<std::string>& known_keys() {
  static const std::set<std::string> keys = {"net_type",
                                             "init_weights",
                                             "project_path",
                                             "dataset",
                                             "metadataset",
                                             "split",
                                             "training_fraction",
                                             "shuffle",
                                             "iteration",
                                             "num_joints",
                                             "all_joints",
                                             "all_joints_names",
                                             "symmetric_pairs",
                                             "individuals",
                                             "uniquebodyparts",
                                             "partaffinityfield_graph",
                                             "num_limbs",
                                             "partaffinityfield_predict",
                                             "pafwidth",
                                             "pairwise_loss_weight",
                                             "num_idchannel",
                                             "optimizer",
                                             "batch_size",
                                             "multi_step",
                                             "max_iters",
                                             "weight_decay",
                                             "momentum",
                                             "display_iters",
                                             "save_iters",
                                             "evaluate_iters",
                                             "keep_snapshots",
                                             "early_stop_patience",
                                             "seed",
                                             "freeze_backbone_stages",
                                             "unfreeze_backbone_after",
                                             "backbone_lr_multiplier",
                                             "schedule",
                                             "backbone_warmup",
                                             "sync_batch_norm",
                                             "precision",
                                             "stride",
                                             "pos_dist_thresh",
                                             "locref_stdev",
                                             "locref_loss_weight",
                                             "location_refinement",
                                             "crop_size",
                                             "global_scale",
                                             "scale_jitter_lo",
                                             "scale_jitter_up",
                                             "rotation",
                                             "rotateratio",
                                             "mirror",
                                             "brightness",
                                             "contrast",
                                             "blur_probability",
                                             "noise_probability",
                                             "noise_stddev",
                                             "loader_threads",
                                             "engine"};
  return keys;
}

// read_pose_config's key groups, in the order pose_cfg.yaml is written: each reads its keys into
// `c` and throws at the first bad one.

// What is trained on what: net_type ... iteration, all_joints_names, symmetric_pairs.
void read_training_set_keys(const projects::YamlMapReader& reader, PoseConfig& c) {
  c.net_type = reader.text("net_type", true);
  c.init_weights = reader.text("init_weights", false);
  c.project_path = reader.text("project_path", false);
  c.dataset = reader.text("dataset", false);
  c.metadataset = reader.text("metadataset", false);
  c.split = reader.text("split", true);
  c.training_fraction =
      reader.optional_number("training_fraction", 0.0, 1.0).value_or(c.training_fraction);
  c.shuffle = reader.optional_int("shuffle", 0, 1000000).value_or(c.shuffle);
  c.iteration = reader.optional_int("iteration", 0, 1000000).value_or(c.iteration);
  c.bodyparts = reader.names("all_joints_names");
  if (c.bodyparts.empty())
    reader.fail("all_joints_names", reader.value("all_joints_names"),
                "all_joints_names must list the bodyparts");
  if (reader.is_null("symmetric_pairs")) return;
  const YAML::Node pairs = reader.value("symmetric_pairs");
  if (!pairs.IsSequence())
    reader.fail("symmetric_pairs", pairs, "symmetric_pairs must be a list of [left, right] pairs");
  for (const auto& pair : pairs) {
    if (!pair.IsSequence() || pair.size() != 2 || !pair[0].IsScalar() || !pair[1].IsScalar()) {
      reader.fail("symmetric_pairs", pair,
                  fmt::format("each symmetric pair must be two bodyparts (found {})",
                              projects::describe(pair)));
    }
    for (const auto& name : {pair[0].Scalar(), pair[1].Scalar()}) {
      if (std::find(c.bodyparts.begin(), c.bodyparts.end(), name) == c.bodyparts.end()) {
        reader.fail("symmetric_pairs", pair,
                    fmt::format("\"{}\" in symmetric_pairs is not a bodypart", name));
      }
    }
    c.symmetric_pairs.emplace_back(pair[0].Scalar(), pair[1].Scalar());
  }
}

// multi_step: [learning rate, until iteration] pairs with rising iterations.
void read_multi_step(const projects::YamlMapReader& reader, PoseConfig& c) {
  if (reader.is_null("multi_step")) return;
  const YAML::Node steps = reader.value("multi_step");
  if (!steps.IsSequence() || steps.size() == 0) {
    reader.fail("multi_step", steps,
                "multi_step must be a list of [learning rate, until iteration] pairs",
                "for example:\nmulti_step:\n- [0.001, 6000]\n- [0.0001, 10000]");
  }
  c.multi_step.clear();
  std::int64_t previous = 0;
  for (const auto& step : steps) {
    if (!step.IsSequence() || step.size() != 2) {
      reader.fail(
          "multi_step", step,
          fmt::format("each multi_step entry must be [learning rate, until iteration] (found {})",
                      projects::describe(step)));
    }
    const double rate =
        reader.number_of("multi_step", step[0], 0.0, 10.0, "a multi_step learning rate");
    const auto until =
        reader.integer_of("multi_step", step[1], previous + 1, "a multi_step iteration");
    c.multi_step.emplace_back(rate, until);
    previous = until;
  }
}

// schedule and backbone_warmup.
void read_schedule_keys(const projects::YamlMapReader& reader, PoseConfig& c) {
  const std::string schedule =
      reader.text("schedule", false, std::string(schedule_name(c.schedule)));
  if (schedule != "time" && schedule != "iterations") {
    reader.fail("schedule", reader.value("schedule"),
                fmt::format("schedule must be time or iterations (found \"{}\")", schedule),
                "time fits the learning-rate drops to train --max-minutes; iterations follows "
                "multi_step's iterations");
  }
  c.schedule = schedule == "time" ? ScheduleKind::time : ScheduleKind::iterations;
  c.backbone_warmup =
      reader.optional_number("backbone_warmup", 0.0, 1.0).value_or(c.backbone_warmup);
  if (c.backbone_warmup >= 1.0) {
    reader.fail("backbone_warmup", reader.value("backbone_warmup"),
                fmt::format("backbone_warmup must be a fraction of the run from 0 up to, but not "
                            "including, 1 (found {})",
                            c.backbone_warmup),
                "0 turns the warm-up off; 0.05 ramps the backbone's rate up over 5 % of the run");
  }
}

// Optimization: optimizer ... backbone_lr_multiplier, schedule, backbone_warmup, sync_batch_norm,
// precision.
void read_optimization_keys(const projects::YamlMapReader& reader, PoseConfig& c) {
  c.optimizer = reader.text("optimizer", false, c.optimizer);
  if (c.optimizer != "adamw" && c.optimizer != "sgd") {
    reader.fail("optimizer", reader.value("optimizer"),
                fmt::format("optimizer must be adamw or sgd (found \"{}\")", c.optimizer));
  }
  c.batch_size = reader.optional_int("batch_size", 1, 4096).value_or(c.batch_size);
  read_multi_step(reader, c);
  c.max_iters = reader.optional_integer("max_iters", 1).value_or(c.multi_step.back().second);
  c.weight_decay = reader.optional_number("weight_decay", 0.0, 1.0).value_or(c.weight_decay);
  c.momentum = reader.optional_number("momentum", 0.0, 1.0).value_or(c.momentum);
  c.display_iters = reader.optional_integer("display_iters", 1).value_or(c.display_iters);
  c.save_iters = reader.optional_integer("save_iters", 1).value_or(c.save_iters);
  c.evaluate_iters = reader.optional_integer("evaluate_iters", 0).value_or(c.evaluate_iters);
  c.keep_snapshots = reader.optional_int("keep_snapshots", 1, 1000000).value_or(c.keep_snapshots);
  c.early_stop_patience =
      reader.optional_int("early_stop_patience", 0, 1000000).value_or(c.early_stop_patience);
  c.seed = static_cast<std::uint64_t>(
      reader.optional_integer("seed", 0).value_or(static_cast<long long>(c.seed)));
  c.freeze_backbone_stages =
      reader.optional_int("freeze_backbone_stages", 0, 1000).value_or(c.freeze_backbone_stages);
  c.unfreeze_backbone_after =
      reader.optional_integer("unfreeze_backbone_after", 0).value_or(c.unfreeze_backbone_after);
  c.backbone_lr_multiplier = reader.optional_number("backbone_lr_multiplier", 0.0, 100.0)
                                 .value_or(c.backbone_lr_multiplier);
  read_schedule_keys(reader, c);
  c.sync_batch_norm = reader.optional_bool("sync_batch_norm").value_or(c.sync_batch_norm);
  c.precision = reader.text("precision", false, c.precision);
  if (c.precision != "tf32" && c.precision != "fp32" && c.precision != "bf16" &&
      c.precision != "auto") {
    reader.fail(
        "precision", reader.value("precision"),
        fmt::format("precision must be tf32, fp32, bf16 or auto (found \"{}\")", c.precision),
        "tf32 is fp32 with TF32 convolutions on a GPU that has them; bf16 needs a CPU with bf16 "
        "units (see labpose doctor); auto picks it where there are");
  }
}

// Targets and loss: stride ... location_refinement.
void read_target_keys(const projects::YamlMapReader& reader, PoseConfig& c) {
  c.stride = reader.optional_int("stride", 1, 1024).value_or(c.stride);
  if (c.stride != 8)
    reader.fail("stride", reader.value("stride"), "stride must be 8 (the networks' output stride)");
  c.pos_dist_thresh =
      reader.optional_number("pos_dist_thresh", 0.5, 1000.0).value_or(c.pos_dist_thresh);
  c.locref_stdev = reader.optional_number("locref_stdev", 1e-3, 1000.0).value_or(c.locref_stdev);
  c.locref_loss_weight =
      reader.optional_number("locref_loss_weight", 0.0, 1000.0).value_or(c.locref_loss_weight);
  c.location_refinement =
      reader.optional_bool("location_refinement").value_or(c.location_refinement);
}

// Augmentation: crop_size ... loader_threads.
void read_augmentation_keys(const projects::YamlMapReader& reader, PoseConfig& c) {
  if (!reader.is_null("crop_size")) {
    const YAML::Node crop = reader.value("crop_size");
    if (!crop.IsSequence() || crop.size() != 2) {
      reader.fail(
          "crop_size", crop,
          fmt::format("crop_size must be [width, height] (found {})", projects::describe(crop)));
    }
    // Up to 16384: the longest side a video frame may have (pipeline/video/probe.cpp).
    c.crop_width = reader.int_of("crop_size", crop[0], 64, 16384, "the crop width");
    c.crop_height = reader.int_of("crop_size", crop[1], 64, 16384, "the crop height");
  }
  c.global_scale = reader.optional_number("global_scale", 0.05, 20.0).value_or(c.global_scale);
  c.scale_jitter_lo =
      reader.optional_number("scale_jitter_lo", 0.05, 20.0).value_or(c.scale_jitter_lo);
  c.scale_jitter_up = reader.optional_number("scale_jitter_up", c.scale_jitter_lo, 20.0)
                          .value_or(c.scale_jitter_up);
  c.rotation = reader.optional_number("rotation", 0.0, 180.0).value_or(c.rotation);
  c.rotateratio = reader.optional_number("rotateratio", 0.0, 1.0).value_or(c.rotateratio);
  c.mirror = reader.optional_bool("mirror").value_or(c.mirror);
  c.brightness = reader.optional_number("brightness", 0.0, 1.0).value_or(c.brightness);
  c.contrast = reader.optional_number("contrast", 0.0, 1.0).value_or(c.contrast);
  c.blur_probability =
      reader.optional_number("blur_probability", 0.0, 1.0).value_or(c.blur_probability);
  c.noise_probability =
      reader.optional_number("noise_probability", 0.0, 1.0).value_or(c.noise_probability);
  c.noise_stddev = reader.optional_number("noise_stddev", 0.0, 255.0).value_or(c.noise_stddev);
  c.loader_threads = reader.optional_int("loader_threads", 1, 256).value_or(c.loader_threads);
}

}  // namespace

PoseConfig read_pose_config(const fs::path& file, std::vector<std::string>* warnings) {
  std::error_code error;
  if (!fs::exists(file, error)) {
    throw Error(fmt::format("the training configuration {} does not exist", file.string()),
                "make the training set first: labpose create-dataset <config.yaml>");
  }
  return parse_pose_config(read_file(file), file, warnings);
}

bool is_pose_config_key(const std::string& key) {
  return known_keys().count(key) != 0;
}

// Several animals: individuals ... num_idchannel (absent in a single-animal file).
void read_multi_animal_keys(const projects::YamlMapReader& reader, PoseConfig& c) {
  c.individuals = reader.names("individuals");
  if (c.individuals.empty()) return;
  c.unique_bodyparts = reader.names("uniquebodyparts");
  if (c.unique_bodyparts.size() >= c.bodyparts.size()) {
    reader.fail("uniquebodyparts", reader.value("uniquebodyparts"),
                "all_joints_names must list the multi-animal bodyparts, then these");
  }
  const auto multi = static_cast<int>(c.bodyparts.size() - c.unique_bodyparts.size());
  if (!reader.is_null("partaffinityfield_graph")) {
    const YAML::Node graph = reader.value("partaffinityfield_graph");
    if (!graph.IsSequence())
      reader.fail("partaffinityfield_graph", graph, "expected a list of [a, b] bodypart indices");
    for (const auto& edge : graph) {
      int ends[2] = {-1, -1};
      for (int k = 0; k < 2 && edge.IsSequence() && edge.size() == 2; ++k) {
        const auto value = projects::yaml_text::parse_float(edge[k].Scalar());
        if (value && *value >= 0 && *value < multi && *value == static_cast<int>(*value))
          ends[k] = static_cast<int>(*value);
      }
      if (ends[0] < 0 || ends[1] < 0 || ends[0] == ends[1]) {
        reader.fail("partaffinityfield_graph", edge,
                    fmt::format("each edge joins two different multi-animal bodyparts, 0 to {}",
                                multi - 1));
      }
      c.paf_graph.emplace_back(ends[0], ends[1]);
    }
  }
  c.pafwidth = reader.optional_number("pafwidth", 1e-3, 1e4).value_or(c.pafwidth);
  c.pairwise_loss_weight =
      reader.optional_number("pairwise_loss_weight", 0.0, 1e6).value_or(c.pairwise_loss_weight);
  c.num_idchannel = reader.optional_int("num_idchannel", 0, 100000).value_or(0);
}

std::optional<MultiAnimalModel> multi_animal_model(const PoseConfig& config) {
  if (!config.multi_animal()) return std::nullopt;
  MultiAnimalModel model;
  model.individuals = config.individuals;
  model.unique_bodyparts = config.unique_bodyparts;
  for (const auto& [source, target] : config.paf_graph) model.graph.push_back({source, target});
  model.identity_channels = config.num_idchannel;
  return model;
}

PoseConfig parse_pose_config(const std::string& text, const fs::path& file,
                             std::vector<std::string>* warnings) {
  const YAML::Node root = projects::parse_yaml(text, file, "pose_cfg.yaml");
  if (!root.IsMap())
    throw Error(
        fmt::format("{}: pose_cfg.yaml must be a mapping of `key: value` lines", file.string()));
  const projects::YamlMapReader reader(file, root);
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (known_keys().count(key) == 0 && warnings != nullptr) {
      warnings->push_back(
          fmt::format("{}: unknown key '{}' is ignored", reader.place(key, entry.first), key));
    }
  }
  PoseConfig c;
  read_training_set_keys(reader, c);
  read_multi_animal_keys(reader, c);
  read_optimization_keys(reader, c);
  read_target_keys(reader, c);
  read_augmentation_keys(reader, c);
  return c;
}

// The multi-animal keys, shared by train/ and test/pose_cfg.yaml; "" for one animal.
std::string multi_animal_text(const PoseConfig& c) {
  if (!c.multi_animal()) return {};
  std::string graph = "[";
  for (std::size_t k = 0; k < c.paf_graph.size(); ++k)
    graph += fmt::format("{}[{}, {}]", k ? ", " : "", c.paf_graph[k].first, c.paf_graph[k].second);
  return fmt::format(
      "# Several animals: the individuals, the bodyparts each has once (uniquebodyparts, the last "
      "of\n# all_joints_names), the part affinity fields' graph (pairs of all_joints_names "
      "indices),\n# their band width in pixels and loss weight, identity channels\n"
      "individuals: {}\nuniquebodyparts: {}\npartaffinityfield_graph: {}]\nnum_limbs: {}\n"
      "partaffinityfield_predict: {}\npafwidth: {}\npairwise_loss_weight: {}\n"
      "num_idchannel: {}\n",
      quoted_list(c.individuals), quoted_list(c.unique_bodyparts), graph, c.paf_graph.size(),
      yes_no(!c.paf_graph.empty()), yaml_float_text(c.pafwidth),
      yaml_float_text(c.pairwise_loss_weight), c.num_idchannel);
}

std::string pose_config_text(const PoseConfig& c) {
  std::string out;
  const auto line = [&out](const std::string& key, const std::string& value) {
    out += key + ": " + value + "\n";
  };
  out +=
      "# labpose training configuration; DeepLabCut's key names where they exist. Edit it to "
      "change\n"
      "# the recipe; labpose train reads it at every start (and --resume keeps the snapshot's "
      "state).\n\n"
      "# What is trained on what\n";
  line("net_type", quote_string(c.net_type));
  out += "init_weights:" +
         (c.init_weights.empty() ? std::string() : " " + quote_string(c.init_weights)) + "\n";
  line("project_path", quote_string(c.project_path));
  line("dataset", quote_string(c.dataset));
  line("metadataset", quote_string(c.metadataset));
  line("split", quote_string(c.split));
  line("training_fraction", yaml_float_text(c.training_fraction));
  line("shuffle", std::to_string(c.shuffle));
  line("iteration", std::to_string(c.iteration));
  line("num_joints", std::to_string(c.bodyparts.size()));
  line("all_joints", all_joints_text(c.bodyparts.size()));
  line("all_joints_names", quoted_list(c.bodyparts));
  std::string pairs = "[";
  for (std::size_t k = 0; k < c.symmetric_pairs.size(); ++k) {
    pairs +=
        (k ? ", " : "") + quoted_list({c.symmetric_pairs[k].first, c.symmetric_pairs[k].second});
  }
  line("symmetric_pairs", pairs + "]");
  out += multi_animal_text(c);
  out += "\n# Optimization (multi_step: [learning rate, until iteration])\n";
  line("optimizer", c.optimizer);
  line("batch_size", std::to_string(c.batch_size));
  std::string steps = "[";
  for (std::size_t k = 0; k < c.multi_step.size(); ++k) {
    steps += fmt::format("{}[{}, {}]", k ? ", " : "", yaml_float_text(c.multi_step[k].first),
                         c.multi_step[k].second);
  }
  line("multi_step", steps + "]");
  line("max_iters", std::to_string(c.max_iters));
  line("weight_decay", yaml_float_text(c.weight_decay));
  line("momentum", yaml_float_text(c.momentum));
  line("display_iters", std::to_string(c.display_iters));
  line("save_iters", std::to_string(c.save_iters));
  line("evaluate_iters", std::to_string(c.evaluate_iters));
  line("keep_snapshots", std::to_string(c.keep_snapshots));
  line("early_stop_patience", std::to_string(c.early_stop_patience));
  line("seed", std::to_string(c.seed));
  line("freeze_backbone_stages", std::to_string(c.freeze_backbone_stages));
  line("unfreeze_backbone_after", std::to_string(c.unfreeze_backbone_after));
  line("backbone_lr_multiplier", yaml_float_text(c.backbone_lr_multiplier));
  out +=
      "# schedule: time fits multi_step and unfreeze_backbone_after, read as fractions of "
      "max_iters,"
      "\n# to train --max-minutes (iterations: by iteration); backbone_warmup: the fraction of the "
      "run\n# over which the backbone's rate ramps up from 0 once it trains (0: off)\n";
  line("schedule", std::string(schedule_name(c.schedule)));
  line("backbone_warmup", yaml_float_text(c.backbone_warmup));
  out +=
      "# sync_batch_norm: with several ranks (mpirun, srun), batch statistics over the whole "
      "batch\n# rather than each rank's share\n";
  line("sync_batch_norm", yes_no(c.sync_batch_norm));
  out +=
      "# precision: auto (bf16 on a CPU whose bf16 units are clearly faster than fp32, as labpose "
      "doctor\n# measures; else fp32; tf32 on a GPU), tf32 (fp32; GPUs of compute capability 8.0+ "
      "multiply\n# convolutions on TF32 tensor cores, as PyTorch does; CPUs compute fp32), fp32 "
      "(strict fp32\n# everywhere) or bf16 (mixed precision: bf16 convolutions and values between "
      "layers, fp32\n# weights, sums and losses; a CPU with bf16 units or a GPU of compute "
      "capability 8.0+)\n";
  line("precision", c.precision);
  out += "\n# Targets and loss (score maps: disks of pos_dist_thresh pixels at stride 8)\n";
  line("stride", std::to_string(c.stride));
  line("pos_dist_thresh", yaml_float_text(c.pos_dist_thresh));
  line("locref_stdev", yaml_float_text(c.locref_stdev));
  line("locref_loss_weight", yaml_float_text(c.locref_loss_weight));
  line("location_refinement", yes_no(c.location_refinement));
  out += "\n# Augmentation (crop_size: [width, height] of the training crops)\n";
  line("crop_size", fmt::format("[{}, {}]", c.crop_width, c.crop_height));
  line("global_scale", yaml_float_text(c.global_scale));
  line("scale_jitter_lo", yaml_float_text(c.scale_jitter_lo));
  line("scale_jitter_up", yaml_float_text(c.scale_jitter_up));
  line("rotation", yaml_float_text(c.rotation));
  line("rotateratio", yaml_float_text(c.rotateratio));
  line("mirror", yes_no(c.mirror));
  line("brightness", yaml_float_text(c.brightness));
  line("contrast", yaml_float_text(c.contrast));
  line("blur_probability", yaml_float_text(c.blur_probability));
  line("noise_probability", yaml_float_text(c.noise_probability));
  line("noise_stddev", yaml_float_text(c.noise_stddev));
  line("loader_threads", std::to_string(c.loader_threads));
  return out;
}

void write_pose_config(const PoseConfig& config, const fs::path& file) {
  write_file_atomically(file, pose_config_text(config));
}

std::string test_pose_config_text(const PoseConfig& c) {
  std::string out =
      "# The test-time settings of this shuffle (DeepLabCut keeps these in test/pose_cfg.yaml).\n";
  out += "dataset: " + quote_string(c.dataset) + "\n";
  out += fmt::format("num_joints: {}\n", c.bodyparts.size());
  out += "all_joints: " + all_joints_text(c.bodyparts.size()) + "\n";
  out += "all_joints_names: " + quoted_list(c.bodyparts) + "\n";
  out += "net_type: " + quote_string(c.net_type) + "\n";
  out += "init_weights:" +
         (c.init_weights.empty() ? std::string() : " " + quote_string(c.init_weights)) + "\n";
  out += "global_scale: 1.0\nlocation_refinement: " + yes_no(c.location_refinement) + "\n";
  out += "locref_stdev: " + yaml_float_text(c.locref_stdev) + "\nstride: 8\nscoremap_dir: test\n";
  return out + multi_animal_text(c);
}

void write_test_pose_config(const PoseConfig& config, const fs::path& file) {
  write_file_atomically(file, test_pose_config_text(config));
}

void check_pose_config(const PoseConfig& pose, const fs::path& file) {
  if (pose.max_iters < 1 || pose.batch_size < 1) {
    throw UsageError(fmt::format("{}: max_iters and batch_size must be at least 1", file.string()));
  }
  if (nets::find_backbone(pose.net_type) == nullptr) {
    throw UsageError(fmt::format("{}: net_type {} is not a network labpose can train",
                                 file.string(), pose.net_type),
                     fmt::format("use one of {}", fmt::join(nets::pose_architectures(), ", ")));
  }
  const int stages = nets::backbone_stages(pose.net_type);
  if (pose.freeze_backbone_stages < 0 || pose.freeze_backbone_stages > stages) {
    throw UsageError(fmt::format("cannot freeze {} backbone stages: {} has {}",
                                 pose.freeze_backbone_stages, pose.net_type, stages),
                     fmt::format("use 0 (train everything) to {}", stages));
  }
  if (pose.unfreeze_backbone_after < 0) {
    throw UsageError(
        fmt::format("unfreeze_backbone_after must be 0 (never) or a positive iteration (found {})",
                    pose.unfreeze_backbone_after));
  }
  if (pose.backbone_warmup < 0 || pose.backbone_warmup >= 1) {
    throw UsageError(
        fmt::format("{}: backbone_warmup must be a fraction of the run from 0 up to, "
                    "but not including, 1 (found {})",
                    file.string(), pose.backbone_warmup),
        "0 turns the warm-up off; 0.05 ramps the backbone's rate up over 5 % of the run");
  }
}

void use_fine_tuning_defaults(PoseConfig& pose) {
  const nets::FineTuningRecipe& recipe = nets::backbone(pose.net_type).fine_tuning;
  pose.freeze_backbone_stages = nets::backbone_stages(pose.net_type);
  pose.unfreeze_backbone_after = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(static_cast<double>(pose.max_iters) * recipe.frozen_fraction));
  pose.backbone_lr_multiplier = recipe.backbone_lr_multiplier;
}

}  // namespace labpose::pipeline
