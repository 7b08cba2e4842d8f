// Evaluating snapshots on the labeled images.
#include "pipeline/evaluation/evaluate.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <numeric>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "pipeline/evaluation/result_files.hpp"
#include "pipeline/plots/colormap.hpp"
#include "pipeline/plots/markers.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/training/snapshot.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// Every image of the training set predicted at full size by the snapshot's network on `backend`,
// with a progress bar named `label`; in int8, calibrated on the images `train` indexes.
std::vector<std::vector<KeypointPrediction>> predict_all(
    nets::Backend& backend, const LoadedSnapshot& loaded, const fs::path& snapshot,
    const DecodeSettings& settings, const Dataset& dataset, const std::vector<std::size_t>& train,
    const fs::path& project, const std::string& label) {
  const auto net = load_snapshot_network(backend, loaded, snapshot);
  if (backend.plan_precision() == nets::PlanPrecision::int8) {
    std::vector<fs::path> images;
    for (const std::size_t index : train) images.push_back(project / dataset.images[index].path);
    calibrate_for_int8(*net, snapshot, images);
  }
  ImagePredictor predictor(backend, *net, settings);
  std::vector<std::vector<KeypointPrediction>> predictions;
  predictions.reserve(dataset.images.size());
  Progress progress(label, static_cast<std::int64_t>(dataset.images.size()), "images");
  for (const auto& image : dataset.images) {
    predictions.push_back(predictor.predict(load_rgb_image(project / image.path)));
    progress.advance();
  }
  return predictions;
}

// One training fraction of the shuffle, with what it needs.
struct TrainedShuffle {
  double fraction = 0.0;
  fs::path train_dir;
  PoseConfig pose;
  std::vector<SnapshotFile> snapshots;  // the chosen ones
};

std::vector<SnapshotFile> chosen_snapshots(const std::vector<SnapshotFile>& snapshots,
                                           const projects::SnapshotIndex& choice,
                                           const fs::path& train_dir) {
  switch (choice.kind) {
    case projects::SnapshotIndex::Kind::all:
      return snapshots;
    case projects::SnapshotIndex::Kind::best:
      return {best_snapshot(
          snapshots, train_dir,
          "evaluate the last one with --snapshot -1, or every one with --snapshot all")};
    case projects::SnapshotIndex::Kind::index:
      break;
  }
  return {select_snapshot(snapshots, choice.index, train_dir)};
}

std::vector<std::vector<KeypointPrediction>> subset(
    const std::vector<std::vector<KeypointPrediction>>& predictions,
    const std::vector<std::size_t>& indices) {
  std::vector<std::vector<KeypointPrediction>> out;
  out.reserve(indices.size());
  for (const std::size_t index : indices) out.push_back(predictions[index]);
  return out;
}

// Test-<video>-<image>.png / Training-...: labels '+', predictions '.' above pcutoff, 'x' below.
void plot_frames(const Dataset& dataset, const std::vector<std::size_t>& indices, bool training,
                 const std::vector<std::vector<KeypointPrediction>>& predictions,
                 const fs::path& project, const fs::path& folder, const std::vector<Rgb>& colors,
                 const projects::ConfigValues& values) {
  for (const std::size_t index : indices) {
    const LabeledImage& image = dataset.images[index];
    cv::Mat rgb = load_rgb_image(project / image.path);
    std::vector<Marker> markers;
    for (std::size_t j = 0; j < image.x.size(); ++j)
      markers.push_back({image.x[j], image.y[j], MarkerShape::plus, colors[j]});
    for (std::size_t j = 0; j < predictions[index].size(); ++j) {
      const KeypointPrediction& p = predictions[index][j];
      markers.push_back({p.x, p.y,
                         p.likelihood > values.pcutoff ? MarkerShape::dot : MarkerShape::cross,
                         colors[j]});
    }
    draw_markers(rgb, markers, values.dotsize, values.alphavalue);
    cv::Mat bgr;
    cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
    std::vector<unsigned char> png;
    if (!cv::imencode(".png", bgr, png)) {
      throw Error(fmt::format("cannot encode the plot of {} as PNG", image.path),
                  "run again without --plot");
    }
    const std::size_t slash = image.path.rfind('/');
    const std::string video = image.path.substr(13, slash - 13);  // after "labeled-data/"
    write_file_atomically(
        folder / projects::evaluation_image_name(training, video, image.path.substr(slash + 1)),
        std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
  }
}

}  // namespace

std::vector<SnapshotEvaluation> evaluate_network(const projects::ProjectConfig& config,
                                                 const EvaluateOptions& options) {
  const projects::ConfigValues& values = config.values();
  const fs::path project = config.project_dir();
  const projects::ProjectLayout layout(project);
  if (values.multi_animal) {
    throw Error(fmt::format("{} is a multi-animal project; labpose evaluates single-animal "
                            "networks only",
                            config.file().string()),
                "use DeepLabCut for multi-animal projects");
  }
  const std::vector<double> fractions = options.training_fraction
                                            ? std::vector<double>{*options.training_fraction}
                                            : values.training_fraction;
  const projects::SnapshotIndex choice = options.snapshots.value_or(values.snapshot_index);

  // Find everything first, so that a wrong shuffle or snapshot index fails before any work.
  std::vector<TrainedShuffle> shuffles;
  std::vector<std::string> untrained;
  for (const double fraction : fractions) {
    const fs::path model_dir =
        layout.model_dir(values.iteration, values.task, values.date, fraction, options.shuffle);
    const fs::path train_config = model_dir / "train" / "pose_cfg.yaml";
    std::error_code error;
    if (!fs::exists(train_config, error)) {
      throw Error(
          fmt::format("shuffle {} of trainset{} was never made: {} does not exist", options.shuffle,
                      projects::training_fraction_percent(fraction), train_config.string()),
          fmt::format("make it with labpose create-dataset {} --shuffle {} (or pick the shuffle "
                      "with --shuffle, the training fraction with --training-fraction)",
                      config.file().string(), options.shuffle));
    }
    TrainedShuffle shuffle;
    shuffle.fraction = fraction;
    shuffle.train_dir = model_dir / "train";
    const auto snapshots = list_snapshots(shuffle.train_dir);
    if (snapshots.empty()) {
      untrained.push_back(shuffle.train_dir.string());
      continue;
    }
    std::vector<std::string> warnings;
    shuffle.pose = read_pose_config(train_config, &warnings);
    for (const auto& warning : warnings) console::warn("{}", warning);
    shuffle.snapshots = chosen_snapshots(snapshots, choice, shuffle.train_dir);
    shuffles.push_back(std::move(shuffle));
  }
  if (shuffles.empty()) {
    throw Error(fmt::format("no snapshots in {}", fmt::join(untrained, ", ")),
                fmt::format("train the network first: labpose train {} --shuffle {}",
                            config.file().string(), options.shuffle));
  }
  for (const auto& folder : untrained)
    console::warn("no snapshots in {} yet; evaluating the other training fractions", folder);

  const fs::path combined =
      layout.evaluation_iteration_dir(values.iteration) / projects::combined_evaluation_name();
  check_combined_evaluation(combined);
  const auto backend = devices::make_backend(options.device);
  std::unique_ptr<nets::Backend> reduced;  // --precision other than fp32: the comparison's
  if (options.precision != nets::PlanPrecision::fp32) {
    reduced = devices::make_backend(options.device, options.precision);
    if (reduced->plan_precision() == nets::PlanPrecision::fp32) {
      console::info("--precision {}: {} computes in fp32 here, so there is nothing to compare",
                    nets::precision_name(options.precision), reduced->name());
      reduced.reset();
    }
  }
  std::vector<SnapshotEvaluation> results;
  for (const TrainedShuffle& shuffle : shuffles) {
    const Dataset dataset = read_dataset(project / shuffle.pose.dataset, project);
    const fs::path split_file = project / shuffle.pose.split;
    const Split split = read_split(split_file);
    const std::vector<std::size_t> train = indices_of(dataset, split.train, split_file);
    const std::vector<std::size_t> test = indices_of(dataset, split.test, split_file);
    const fs::path folder = layout.evaluation_dir(values.iteration, values.task, values.date,
                                                  shuffle.fraction, options.shuffle);
    const DecodeSettings settings{shuffle.pose.stride, shuffle.pose.locref_stdev,
                                  shuffle.pose.location_refinement};
    const std::string note = small_test_set_note(
        test.size(),
        projects::shuffle_folder_name(values.task, values.date, shuffle.fraction, options.shuffle));
    if (!note.empty()) console::warn("{}", note);
    for (const SnapshotFile& snapshot : shuffle.snapshots) {
      const LoadedSnapshot loaded = read_snapshot(snapshot.path);
      if (loaded.metadata.bodyparts != dataset.bodyparts) {
        throw Error(fmt::format("{} predicts the bodyparts {}, but the training set {} has {}",
                                snapshot.path.string(), fmt::join(loaded.metadata.bodyparts, ", "),
                                shuffle.pose.dataset, fmt::join(dataset.bodyparts, ", ")),
                    "the labels changed since training: train again (or evaluate another shuffle)");
      }
      SnapshotEvaluation result;
      result.training_fraction = shuffle.fraction;
      result.shuffle = options.shuffle;
      result.iterations = snapshot.iteration;
      result.snapshot = snapshot.path.stem().string();
      result.scorer = projects::scorer_name(loaded.metadata.architecture, values.task, values.date,
                                            options.shuffle, snapshot.iteration);
      result.bodyparts = dataset.bodyparts;
      result.pcutoff = values.pcutoff;
      result.train_images = train.size();
      result.test_images = test.size();
      result.folder = folder;

      const std::string label =
          fmt::format("{} {}",
                      projects::shuffle_folder_name(values.task, values.date, shuffle.fraction,
                                                    options.shuffle),
                      result.snapshot);
      const auto predictions =
          predict_all(*backend, loaded, snapshot.path, settings, dataset, train, project, label);
      result.train = summarize_errors(dataset, train, subset(predictions, train), values.pcutoff);
      result.test = summarize_errors(dataset, test, subset(predictions, test), values.pcutoff);
      if (reduced) {
        const nets::PlanPrecision precision = reduced->plan_precision();
        const auto other =
            predict_all(*reduced, loaded, snapshot.path, settings, dataset, train, project,
                        fmt::format("{} in {}", label, nets::precision_name(precision)));
        result.reduced = ReducedPrecisionEvaluation{
            precision, summarize_errors(dataset, train, subset(other, train), values.pcutoff),
            summarize_errors(dataset, test, subset(other, test), values.pcutoff),
            keypoint_shift(predictions, other, values.pcutoff)};
      }

      std::error_code error;
      fs::create_directories(folder, error);
      if (error) {
        throw Error(
            fmt::format("cannot create the folder {}: {}", folder.string(), error.message()),
            "check that you may write to the project folder");
      }
      const fs::path table_file =
          folder / projects::evaluation_predictions_name(result.scorer, result.snapshot);
      projects::write_table_hdf5(predictions_table(dataset, predictions, result.scorer),
                                 table_file);
      const EvaluationRow row{
          snapshot.iteration,        projects::training_fraction_percent(shuffle.fraction),
          options.shuffle,           result.train.mean,
          result.test.mean,          values.pcutoff,
          result.train.mean_pcutoff, result.test.mean_pcutoff};
      const fs::path results_file = folder / projects::evaluation_results_name(result.scorer);
      write_file_atomically(results_file, evaluation_results_csv({row}));
      const fs::path keypoint_file = folder / projects::keypoint_results_name(result.scorer);
      write_file_atomically(keypoint_file,
                            keypoint_results_csv(dataset.bodyparts, result.train, result.test));
      merge_combined_evaluation(combined, {row});
      result.written = {table_file, results_file, keypoint_file, combined};
      if (options.plot) {
        const fs::path plots =
            folder / projects::labeled_images_folder_name(result.scorer, result.snapshot);
        fs::create_directories(plots, error);
        if (error) {
          throw Error(
              fmt::format("cannot create the folder {}: {}", plots.string(), error.message()),
              "check that you may write to the project folder");
        }
        const auto colors = colormap_colors(values.colormap, dataset.bodyparts.size());
        plot_frames(dataset, test, false, predictions, project, plots, colors, values);
        plot_frames(dataset, train, true, predictions, project, plots, colors, values);
        result.written.push_back(plots);
      }
      results.push_back(std::move(result));
    }
  }
  return results;
}

}  // namespace labpose::pipeline
