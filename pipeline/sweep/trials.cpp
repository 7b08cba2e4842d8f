// Trial shuffles: the same files create-dataset writes for a shuffle, with the validation images
// taken out of the training images.
#include "pipeline/sweep/trials.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "nets/random.hpp"
#include "pipeline/dataset/training_set_files.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

SweepBase read_sweep_base(const projects::ProjectConfig& config, int shuffle,
                          double training_fraction) {
  const projects::ConfigValues& values = config.values();
  const fs::path project = config.project_dir();
  SweepBase base;
  base.shuffle = shuffle;
  base.training_fraction = training_fraction;
  base.train_dir = projects::model_train_dir(projects::ProjectLayout(project).model_dir(
      values.iteration, values.task, values.date, training_fraction, shuffle));
  const fs::path pose_file = projects::pose_cfg_in(base.train_dir);
  std::error_code error;
  if (!fs::exists(pose_file, error)) {
    throw Error(fmt::format("{} does not exist: shuffle {} with TrainingFraction {} has no "
                            "training set to sweep over",
                            pose_file.string(), shuffle, training_fraction),
                fmt::format("make it first: labpose create-dataset {} --shuffle {}",
                            config.file().string(), shuffle));
  }
  base.pose = read_pose_config(pose_file);
  const fs::path split_file = project / base.pose.split;
  base.split = read_split(split_file);
  if (!base.split.validation.empty()) {
    throw UsageError(fmt::format("shuffle {} is itself a sweep's trial ({} has validation "
                                 "images)",
                                 shuffle, split_file.string()),
                     "sweep over the shuffle the trials came from (by default 1)");
  }
  base.dataset = read_dataset(project / base.pose.dataset, project);
  indices_of(base.dataset, base.split.train, split_file);  // every image is still labeled
  indices_of(base.dataset, base.split.test, split_file);
  return base;
}

std::vector<std::string> draw_validation_images(const Split& base, double fraction,
                                                std::uint64_t seed) {
  const std::size_t total = base.train.size();
  if (total < 2) {
    throw Error(fmt::format("shuffle {} has {} training image{}: a sweep needs at least 2 (some "
                            "to train on, some to choose the trial on)",
                            base.shuffle, total, total == 1 ? "" : "s"),
                "label more frames, then make the training set again");
  }
  const auto wanted = static_cast<std::size_t>(std::llround(fraction * static_cast<double>(total)));
  const std::size_t count = std::clamp<std::size_t>(wanted, 1, total - 1);
  // A seeded Fisher-Yates shuffle of the positions; the first `count` are validation images.
  std::vector<std::size_t> order(total);
  for (std::size_t i = 0; i < total; ++i) order[i] = i;
  nets::Random random(seed * 0x9E3779B97F4A7C15ULL + 0x5EEDULL);
  for (std::size_t i = total - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(random.next() % (i + 1));
    std::swap(order[i], order[j]);
  }
  std::set<std::size_t> chosen(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count));
  std::vector<std::string> validation;
  for (const std::size_t position : chosen) validation.push_back(base.train[position]);
  return validation;
}

std::vector<fs::path> write_trial_shuffles(const projects::ProjectConfig& config,
                                           const SweepBase& base,
                                           const std::vector<std::string>& validation,
                                           std::uint64_t seed, std::vector<TrialShuffle> trials) {
  const projects::ConfigValues& values = config.values();
  const fs::path project = config.project_dir();
  const projects::ProjectLayout layout(project);
  const fs::path set_dir = layout.training_set_dir(values.iteration, values.task, values.date);
  const std::set<std::string> held_out(validation.begin(), validation.end());
  Split split = base.split;
  split.seed = seed;
  split.validation = validation;
  split.train.clear();
  for (const auto& image : base.split.train) {
    if (held_out.count(image) == 0) split.train.push_back(image);
  }
  const fs::path split_probe = set_dir / projects::split_file_name(base.training_fraction, 0);
  const auto train = indices_of(base.dataset, split.train, split_probe);
  const auto test = indices_of(base.dataset, split.test, split_probe);
  const std::string pickle =
      documentation_pickle(base.dataset, train, test, base.training_fraction);

  std::vector<RegisteredShuffle> registered;
  std::vector<fs::path> folders;
  for (TrialShuffle& trial : trials) {
    PoseConfig& pose = trial.pose;
    const fs::path split_file =
        set_dir / projects::split_file_name(base.training_fraction, trial.shuffle);
    const fs::path pickle_file = set_dir / projects::documentation_pickle_name(
                                               values.task, base.training_fraction, trial.shuffle);
    pose.split = split_file.lexically_relative(project).generic_string();
    pose.metadataset = pickle_file.lexically_relative(project).generic_string();
    pose.shuffle = trial.shuffle;
    pose.training_fraction = base.training_fraction;
    split.shuffle = trial.shuffle;
    const fs::path folder = layout.model_dir(values.iteration, values.task, values.date,
                                             base.training_fraction, trial.shuffle);
    create_folder(projects::model_train_dir(folder));
    create_folder(projects::model_test_dir(folder));
    write_split(split, split_file);
    write_file_atomically(pickle_file, pickle);
    write_pose_config(pose, projects::pose_cfg_in(projects::model_train_dir(folder)));
    write_test_pose_config(pose, projects::pose_cfg_in(projects::model_test_dir(folder)));
    RegisteredShuffle entry;
    entry.name = projects::shuffle_folder_name(values.task, values.date, base.training_fraction,
                                               trial.shuffle);
    entry.training_fraction = base.training_fraction;
    entry.shuffle = trial.shuffle;
    entry.train = train;
    entry.test = test;
    registered.push_back(entry);
    folders.push_back(folder);
  }
  const fs::path registry_file = set_dir / projects::training_set_metadata_name();
  write_file_atomically(registry_file, updated_shuffle_registry(registry_file, registered));
  return folders;
}

}  // namespace labpose::pipeline
