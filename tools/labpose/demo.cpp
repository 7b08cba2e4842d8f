// labpose demo [--dir D] [--seed S] [--frames N] [--labeled-frames K] [--minutes M] [--device D]
//   [--project-only] [--animals N [--shades] [--identity]]: the whole loop on a synthetic project
// whose labels are exact - make the project (pipeline/synthetic), create the training set, train on
// the CPU for a few minutes, evaluate, print the test error, analyze the video and compare the
// tracks with the ground truth. With --project-only it stops after making the project. With
// --animals 2 or more the project is a multi-animal one: trained with its part affinity fields and
// evaluated with its animals scored too, it stops before the analysis and prints the commands that
// analyze and score the videos; --shades gives the mice slightly different coats and --identity
// adds the identity head.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <tuple>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/progress.hpp"
#include "nets/backend.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/evaluation/evaluate.hpp"
#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/synthetic/mice_test_video.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/training/trainer.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "projects/config.hpp"
#include "projects/layout.hpp"
#include "projects/table.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/size_option.hpp"

namespace labpose::tools {
namespace {

// Training time: fitted to it with pretrained weights, an upper bound from scratch.
constexpr double kPretrainedMinutes = 5.0;
constexpr double kScratchMinutes = 9.0;

// The demo's recipe: DeepLabCut's, with 192x192 crops (the synthetic mouse fills them) and a
// schedule that fits in a few minutes of a 2-core CPU (by iterations from scratch; as fractions of
// the time for a pretrained backbone, which keeps create-dataset's fine-tuning recipe).
void use_demo_recipe(const std::filesystem::path& pose_file) {
  pipeline::PoseConfig pose = pipeline::read_pose_config(pose_file);
  pose.crop_width = pose.crop_height = 192;
  pose.multi_step = {{1e-3, 1000}, {1e-4, 1300}};
  pose.max_iters = 1300;
  if (pose.unfreeze_backbone_after > 0) pose.unfreeze_backbone_after = pose.max_iters / 10;
  pose.evaluate_iters = 250;
  pose.save_iters = 500;
  pose.keep_snapshots = 2;
  pipeline::write_pose_config(pose, pose_file);
}

// The median distance between tracked and true keypoints over every visible keypoint of every
// frame.
double median_error_against_truth(
    const projects::Table& tracks,
    const std::vector<std::vector<pipeline::SyntheticKeypoint>>& truth) {
  std::vector<double> errors;
  for (std::size_t frame = 0; frame < std::min(tracks.row_count(), truth.size()); ++frame) {
    for (std::size_t j = 0; j < truth[frame].size() && 3 * j + 1 < tracks.column_count(); ++j) {
      const auto& point = truth[frame][j];
      const double x = tracks.at(frame, 3 * j), y = tracks.at(frame, 3 * j + 1);
      if (!point.visible || std::isnan(x)) continue;
      errors.push_back(std::hypot(x - point.x, y - point.y));
    }
  }
  if (errors.empty()) return std::nan("");
  const auto middle = errors.begin() + static_cast<long>(errors.size() / 2);
  std::nth_element(errors.begin(), middle, errors.end());
  return *middle;
}

struct DemoOptions {
  pipeline::DemoProjectOptions project;
  std::string size;  // --size WxH; empty: 320x240, or 640x480 with several animals
  bool project_only = false;
  std::optional<double> minutes;
  std::string device = "cpu";
  int test_frames = 0;  // --test-frames: a tracking test video of that many frames (several mice)
};

// efficientnet_lite0 from its ImageNet weights when the cache has them, else the network that
// learns fastest from scratch.
pipeline::CreateDatasetOptions demo_dataset_options() {
  pipeline::CreateDatasetOptions create;
  create.net_type = "mobilenet_v2_0.35";
  try {
    const auto cached =
        pipeline::find_cached_weights(pipeline::weights_cache_dir(), "efficientnet_lite0");
    if (cached && cached->problem.empty()) {
      create.net_type = "efficientnet_lite0";
      create.weights_cache = pipeline::weights_cache_dir();
    } else {
      console::info(
          "no intact ImageNet weights of efficientnet_lite0 in {}: the demo trains "
          "mobilenet_v2_0.35 from scratch (labpose weights fetch efficientnet_lite0 "
          "makes it start from them)",
          pipeline::weights_cache_dir().string());
    }
  } catch (const Error& problem) {
    console::warn("{}: the demo trains from scratch", problem.what());
  }
  return create;
}

// The training of the demo's shuffle: for some minutes from ImageNet weights, or the recipe's
// iterations from scratch. Throws an interrupted Error that says how to resume.
void train_demo(const DemoOptions& options, const projects::ProjectConfig& config,
                const pipeline::CreatedDataset& created, const std::filesystem::path& train_dir) {
  pipeline::TrainOptions train;
  train.project = config.project_dir();
  train.train_dir = train_dir;
  train.device = options.device;
  train.pcutoff = config.values().pcutoff;
  if (!created.init_weights.empty()) {
    train.max_minutes = options.minutes.value_or(kPretrainedMinutes);
    train.schedule = pipeline::ScheduleKind::time;
    console::info("== train: {} from its ImageNet weights ({}) on {}, {} minutes", created.net_type,
                  created.init_weights, options.device, train.max_minutes);
  } else {
    // A cap: the recipe's 1300 iterations usually end first.
    train.max_minutes = options.minutes.value_or(kScratchMinutes);
    train.schedule = pipeline::ScheduleKind::iterations;
    console::info("== train: {} from scratch on {}, at most {} minutes", created.net_type,
                  options.device, train.max_minutes);
  }
  const InterruptHandler interrupts;
  const pipeline::TrainResult trained = pipeline::train(train);
  if (trained.stop == pipeline::TrainResult::Stop::interrupted) {
    throw Error(fmt::format("the demo was stopped by {} at iteration {}", interrupt_reason(),
                            trained.iterations),
                "continue it with: labpose train " + config.file().string() + " --resume",
                ErrorKind::interrupted);
  }
  console::info("trained {} iterations in {} ({})", trained.iterations,
                format_duration(trained.seconds), nets::precision_name(trained.precision));
}

// The last snapshot evaluated (not the best one: that one was chosen by its test error); a
// multi-animal one's animals scored too.
pipeline::SnapshotEvaluation evaluate_last_snapshot(const DemoOptions& options,
                                                    const projects::ProjectConfig& config,
                                                    const std::filesystem::path& train_dir) {
  console::info("== evaluate: the last snapshot on every labeled frame at full size");
  const auto snapshots = pipeline::list_snapshots(train_dir);
  int last = -1;
  for (std::size_t i = 0; i < snapshots.size(); ++i) {
    if (!snapshots[i].best) last = static_cast<int>(i);
  }
  pipeline::EvaluateOptions evaluate;
  evaluate.snapshots = projects::SnapshotIndex{projects::SnapshotIndex::Kind::index, last};
  evaluate.device = options.device;
  const auto results = pipeline::evaluate_network(config, evaluate);
  const auto& result = results.front();
  console::info("{}: train error {:.2f} px on {} images", result.snapshot, result.train.mean,
                result.train_images);
  std::cout << fmt::format("test error: {:.2f} px", result.test.mean) << std::endl;
  if (result.assembly) {
    std::cout << fmt::format("test animals: mAP {:.3f}, mAR {:.3f} (COCO's OKS 0.50:0.95)",
                             result.assembly->test.mean_average_precision,
                             result.assembly->test.mean_average_recall)
              << std::endl;
    std::cout << fmt::format("test assembly: purity {:.3f}, whole animals {:.3f}",
                             result.assembly->test_purity.purity,
                             result.assembly->test_purity.whole_animals)
              << std::endl;
  }
  return result;
}

// The video analyzed as `labpose analyze` would by default and compared with the ground truth.
void analyze_demo_video(const DemoOptions& options, const projects::ProjectConfig& config,
                        const pipeline::DemoProject& demo) {
  console::info("== analyze: every frame of the video with the default snapshot (the best)");
  pipeline::AnalyzeOptions analyze;
  analyze.device = options.device;
  analyze.csv = true;
  const auto analyzed = pipeline::analyze_videos(config, {demo.video}, analyze);
  if (analyzed.front().outcome == pipeline::VideoAnalysis::Outcome::failed) {
    throw Error("the demo video could not be analyzed: " + analyzed.front().error);
  }
  const double median =
      median_error_against_truth(projects::read_table_hdf5(analyzed.front().files.h5), demo.truth);
  console::info("tracks: {}", analyzed.front().files.h5.string());
  std::cout << fmt::format(
                   "video error: {:.2f} px median over the {} frames (against the generator's "
                   "ground truth)",
                   median, analyzed.front().frames)
            << std::endl;
}

// The training set of shuffle 1: 80 % of the labeled frames to train on, with the demo's recipe.
// Returns the shuffle's train folder.
std::filesystem::path create_demo_dataset(projects::ProjectConfig& config,
                                          pipeline::CreatedDataset& created) {
  console::info("== create-dataset: 80 % of the labeled frames to train on, 20 % to test");
  config.set_training_fraction({0.8});
  config.save();
  pipeline::MergeReport report;
  const pipeline::Dataset dataset = pipeline::merge_labeled_data(config, &report);
  created = pipeline::create_training_dataset(config, dataset, demo_dataset_options());
  const auto& shuffle = created.shuffles.front();
  console::info("{} training and {} test images ({} frames without a visible keypoint left out)",
                shuffle.train_images, shuffle.test_images, report.skipped.size());
  const std::filesystem::path train_dir = projects::model_train_dir(shuffle.model_dir);
  use_demo_recipe(projects::pose_cfg_in(train_dir));
  return train_dir;
}

// The tracking test video of --test-frames beside the project's own: other paths of the same
// kind of scene, and its ground truth (pipeline/synthetic/mice_test_video.hpp).
std::optional<pipeline::MiceTestVideo> write_test_video(const DemoOptions& options,
                                                        const pipeline::DemoProject& demo) {
  if (options.test_frames == 0) return std::nullopt;
  pipeline::SyntheticMiceOptions scene;
  scene.video = options.project.video;
  scene.video.frames = options.test_frames;
  scene.video.seed = options.project.video.seed + 1;
  scene.animals = options.project.animals;
  scene.distinct_shades = options.project.distinct_shades;
  console::info("rendering the tracking test video ({} frames, seed {})", scene.video.frames,
                scene.video.seed);
  const auto files = pipeline::write_mice_test_video(demo.video.parent_path(), "test_mice", scene);
  console::info("test video {} with its ground truth {}", files.video.string(),
                files.truth_h5.string());
  return files;
}

// Where the multi-animal demo stops, after its evaluation: the command that analyzes and tracks
// its video (and the one that scores the tracks of the test video).
void stop_before_multi_animal_analysis(const projects::ProjectConfig& config,
                                       const std::filesystem::path& video,
                                       const std::optional<pipeline::MiceTestVideo>& test) {
  console::info(
      "the multi-animal demo stops after its evaluation; analyze and track its video with: "
      "labpose analyze {} {}",
      config.file().string(), video.string());
  if (!test) return;
  console::info(
      "score tracking on the test video: labpose analyze {} {}, then labpose-bench-tracks "
      "<the _el.h5 it prints> {}",
      config.file().string(), test->video.string(), test->truth_h5.string());
}

int run_demo(const DemoOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const auto& video = options.project.video;
  if (options.project.animals > 1) {
    console::info(
        "making the synthetic multi-animal demo project ({} mice, {} frames of {}x{}, "
        "seed {})",
        options.project.animals, video.frames, video.width, video.height, video.seed);
  } else {
    console::info("making the synthetic demo project ({} frames of {}x{}, seed {})", video.frames,
                  video.width, video.height, video.seed);
  }
  const pipeline::DemoProject demo = pipeline::create_demo_project(options.project);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  console::info("made {} in {:.1f} s: video {}, {} labeled frames", demo.config.string(), seconds,
                demo.video.filename().string(), demo.labeled_frames.size());
  std::cout << demo.config.string() << std::endl;
  const auto test_video = write_test_video(options, demo);
  if (options.project_only) return 0;

  projects::ProjectConfig config = projects::ProjectConfig::load(demo.config);
  pipeline::CreatedDataset created;
  const std::filesystem::path train_dir = create_demo_dataset(config, created);
  train_demo(options, config, created, train_dir);
  evaluate_last_snapshot(options, config, train_dir);
  if (config.values().multi_animal) {
    stop_before_multi_animal_analysis(config, demo.video, test_video);
  } else {
    analyze_demo_video(options, config, demo);
  }
  console::info(
      "done in {}; the project is {}",
      format_duration(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()),
      config.project_dir().string());
  return 0;
}

}  // namespace

Command demo_command() {
  Command command;
  command.name = "demo";
  command.summary =
      "the whole pipeline on a synthetic mouse: project, training set, training, evaluation";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<DemoOptions>();
    options->project.labeled_frames = 60;
    app.add_option("--dir", options->project.dir,
                   "where to make the project folder (default: here)");
    app.add_option("--seed", options->project.video.seed,
                   "random seed of the synthetic mouse's path and looks (default 1)");
    app.add_option("--frames", options->project.video.frames,
                   "frames in the synthetic video (default 300)")
        ->check(CLI::Range(1, 1000000));
    app.add_option("--labeled-frames", options->project.labeled_frames,
                   "frames extracted by k-means and labeled from the ground truth (default 60)")
        ->check(CLI::Range(1, 100000));
    app.add_option("--threads", options->project.threads, "decoder threads (default: one per core)")
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--project-only", options->project_only,
                 "only make the project (print its config.yaml), no training");
    app.add_option("--animals", options->project.animals,
                   "mice in the video (default 1); 2 or more make a multi-animal project "
                   "(individuals mouse1, mouse2, ...), trained and evaluated")
        ->check(CLI::Range(1, 10));
    app.add_option("--size", options->size,
                   "the video's size, WIDTHxHEIGHT (default 320x240; 640x480 with --animals, "
                   "the size of DeepLabCut's tri-mouse frames); the mice scale with it");
    app.add_flag("--shades", options->project.distinct_shades,
                 "with --animals: give each mouse a slightly different fur shade");
    app.add_flag("--identity", options->project.identity,
                 "with --animals: identity: true in config.yaml, so that the network also learns "
                 "which mouse is which from its shade (implies --shades)");
    app.add_option("--test-frames", options->test_frames,
                   "with --animals: also render a tracking test video of this many frames "
                   "(videos/test_mice.mp4: other paths, the same mice) and its ground truth "
                   "(test_mice_truth.h5/.csv), for labpose-bench-tracks")
        ->check(CLI::Range(1, 1000000));
    app.add_option(
           "--minutes", options->minutes,
           fmt::format("train efficientnet_lite0 from its cached ImageNet weights for this "
                       "many minutes (default {}), or mobilenet_v2_0.35 from scratch for at "
                       "most this many (default {})",
                       kPretrainedMinutes, kScratchMinutes))
        ->check(CLI::PositiveNumber);
    app.add_option("--device", options->device,
                   "where to train: cpu (default), auto, cuda or cuda:N");
    app.footer(
        "Renders a video of a synthetic mouse (snout, ears, tail base) whose keypoints are known "
        "exactly, creates demo-labpose-<date>/ from it as `labpose create` would, extracts frames "
        "as `labpose extract-frames` would and labels them from the ground truth. Then, unless "
        "--project-only: create-dataset (TrainingFraction 0.8; efficientnet_lite0 from its "
        "ImageNet weights when `labpose weights` has them in its cache, trained for 5 minutes on "
        "192x192 crops with the schedule fitted to the time; else mobilenet_v2_0.35 from scratch, "
        "1300 iterations, about 5 minutes on 2 CPU cores), evaluate the last snapshot and print "
        "`test error: X px`, analyze the video with the best snapshot (tracks .h5/.csv beside it) "
        "and print the median distance to the true keypoints. The first line printed is the path "
        "of config.yaml. With --animals N (2 or more): N mice that meet, touch and pass each "
        "other, in a multi-animal project demo_mice-labpose-<date>/ (identity: false; hidden "
        "keypoints left unlabeled), trained and evaluated as above (errors after matching the "
        "predicted mice to the labeled ones, `test animals: mAP X, mAR Y` and `test assembly: "
        "purity P, whole animals W`) in a 640x480 video (--size); it then prints the labpose "
        "analyze command that analyzes and tracks the video.");
    return [options]() {
      if (options->test_frames > 0 && options->project.animals < 2) {
        throw UsageError("--test-frames renders a tracking test video of several mice",
                         "add --animals N (2 or more)");
      }
      if (options->project.identity) {
        if (options->project.animals < 2) {
          throw UsageError("--identity tells several mice apart", "add --animals N (2 or more)");
        }
        options->project.distinct_shades = true;
      }
      auto& video = options->project.video;
      if (!options->size.empty()) {
        std::tie(video.width, video.height) = parse_size_option(options->size, "--size", 64);
      } else if (options->project.animals > 1) {
        video.width = 640;
        video.height = 480;
      }
      return run_demo(*options);
    };
  };
  return command;
}

}  // namespace labpose::tools
