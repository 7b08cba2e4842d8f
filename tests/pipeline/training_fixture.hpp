// The small synthetic project the trainer tests train on: the demo project's labels as a training
// set (what create-dataset makes) with a tiny recipe that trains in seconds. Not a test itself.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "core/interrupt.hpp"

#include "pipeline/dataset/dataset.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/training/trainer.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {

// A recipe that trains in seconds: batch 2 of `crop` pixels square, 6 iterations, stats every
// 2, snapshots and test errors every 3, in fp32 (the same numbers on every CPU; `auto`, the
// default, is bf16 where the CPU's bf16 units are faster, and has tests of its own).
inline void use_tiny_recipe(PoseConfig& pose, int crop) {
  pose.precision = "fp32";
  pose.batch_size = 2;
  pose.crop_width = pose.crop_height = crop;
  pose.multi_step = {{1e-3, 1000}};
  pose.max_iters = 6;
  pose.display_iters = 2;
  pose.save_iters = 3;
  pose.evaluate_iters = 3;
  pose.loader_threads = 2;
}

// Training of the shuffle in `train_dir` of `project` on the CPU.
inline TrainOptions cpu_training_options(const std::filesystem::path& project,
                                         const std::filesystem::path& train_dir) {
  TrainOptions options;
  options.project = project;
  options.train_dir = train_dir;
  options.device = "cpu";
  return options;
}

// The demo project turned into a training set by the library (what create-dataset does).
struct TrainingFixture {
  testing::TempDir dir;
  std::filesystem::path project, train_dir;
  PoseConfig pose;

  explicit TrainingFixture(int frames = 12) {
    DemoProjectOptions options;
    options.dir = dir.path();
    options.labeled_frames = frames;
    options.video.width = 128;
    options.video.height = 96;
    options.video.frames = 60;
    const DemoProject demo = create_demo_project(options);
    const auto config = projects::ProjectConfig::load(demo.config);
    project = config.project_dir();
    MergeReport report;
    const Dataset dataset = merge_labeled_data(config, &report);
    projects::write_table_hdf5(dataset_table(dataset, config.values().scorer),
                               project / "merged.h5");
    write_split(make_split(dataset, 0.75, 1, 3), project / "split.json");
    train_dir = project / "model" / "train";
    std::filesystem::create_directories(train_dir);
    pose.net_type = "mobilenet_v2_0.35";
    pose.project_path = project.string();
    pose.dataset = "merged.h5";
    pose.split = "split.json";
    pose.bodyparts = dataset.bodyparts;
    use_tiny_recipe(pose, 64);
    write();
  }
  void write() const { write_pose_config(pose, train_dir / "pose_cfg.yaml"); }
  TrainOptions options() const { return cpu_training_options(project, train_dir); }
};

// The losses of a run interrupted (as by Ctrl-C) after iteration `stop_after` and resumed to its
// end: those of an uninterrupted run when resuming is exact.
inline std::vector<double> interrupted_and_resumed_losses(const TrainOptions& options,
                                                          std::int64_t stop_after) {
  std::vector<double> losses;
  TrainOptions first = options;
  first.on_step = [&](std::int64_t iteration, double loss) {
    losses.push_back(loss);
    if (iteration == stop_after) request_interrupt();
  };
  {
    const InterruptHandler handler;
    if (train(first).stop != TrainResult::Stop::interrupted) return {};
  }
  TrainOptions rest = options;
  rest.resume = true;
  rest.on_step = [&](std::int64_t, double loss) { losses.push_back(loss); };
  train(rest);
  return losses;
}

// Removes everything training wrote, keeping pose_cfg.yaml.
inline void clear_training_outputs(const std::filesystem::path& train_dir) {
  for (const auto& entry : std::filesystem::directory_iterator(train_dir)) {
    if (entry.path().filename() != "pose_cfg.yaml") std::filesystem::remove(entry.path());
  }
}

}  // namespace labpose::pipeline
