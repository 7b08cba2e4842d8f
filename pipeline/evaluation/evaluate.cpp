// Evaluating snapshots on the labeled images.
#include "pipeline/evaluation/evaluate.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "pipeline/evaluation/animal_evaluation.hpp"
#include "pipeline/evaluation/animal_matching.hpp"
#include "pipeline/evaluation/keypoint_similarity.hpp"
#include "pipeline/evaluation/result_files.hpp"
#include "pipeline/images/image_files.hpp"
#include "pipeline/plots/colormap.hpp"
#include "pipeline/plots/markers.hpp"
#include "pipeline/pose/animal_predictor.hpp"
#include "pipeline/pose/candidate_keys.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/pose/paf_best.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/training/snapshot.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// Every image of the training set predicted at full size: per image one keypoint per slot of the
// dataset, and for a multi-animal network the animals assembled through the graph chosen.
struct Predictions {
  std::vector<std::vector<KeypointPrediction>> slots;
  AssembledImages assembled;  // multi-animal networks only
  std::size_t graph_edges = 0;
};

// The predictions of the snapshot's network on `backend`, with a progress bar named `label`; in
// int8, calibrated on the images `train` indexes. A multi-animal network's animals are matched to
// the labeled ones (animal_matching.hpp).
Predictions predict_all(nets::Backend& backend, const LoadedSnapshot& loaded,
                        const fs::path& snapshot, const DecodeSettings& settings,
                        const Dataset& dataset, const std::vector<std::size_t>& train,
                        const fs::path& project, const std::string& label) {
  const auto net = load_snapshot_network(backend, loaded, snapshot);
  if (backend.plan_precision() == nets::PlanPrecision::int8) {
    std::vector<fs::path> images;
    for (const std::size_t index : train) images.push_back(project / dataset.images[index].path);
    calibrate_for_int8(*net, snapshot, images);
  }
  const auto& model = loaded.metadata.multi_animal;
  ImagePredictor predictor(backend, *net, settings);
  std::unique_ptr<AnimalPredictor> animals;
  MapAssemblySettings assembly =
      model ? project_assembly_settings(*model, settings) : MapAssemblySettings{};
  if (model) {
    read_candidate_keys(test_pose_cfg_of(snapshot), assembly.candidates);
    animals = std::make_unique<AnimalPredictor>(
        backend, *net, *model, static_cast<int>(loaded.metadata.bodyparts.size()), assembly);
  }
  // The candidates' radius: chosen among kNmsRadiiTried where no person set it.
  std::vector<RadiusDetections> by_radius;
  if (model && evaluate_chooses_nms_radius(test_pose_cfg_of(snapshot))) {
    for (const int radius : kNmsRadiiTried) by_radius.push_back({radius, {}});
  } else if (model) {
    by_radius.push_back({assembly.candidates.nms_radius, {}});
  }
  std::vector<int> radii;
  for (const RadiusDetections& radius : by_radius) radii.push_back(radius.nms_radius);
  Predictions predictions;
  predictions.slots.reserve(dataset.images.size());
  Progress progress(label, static_cast<std::int64_t>(dataset.images.size()), "images");
  for (const auto& image : dataset.images) {
    const cv::Mat rgb = load_rgb_image(project / image.path);
    if (animals) {
      std::vector<ImageDetections> found = animals->detect(rgb, radii);
      for (std::size_t k = 0; k < found.size(); ++k)
        by_radius[k].images.push_back(std::move(found[k]));
    } else {
      predictions.slots.push_back(predictor.predict(rgb));
    }
    progress.advance();
  }
  if (!animals) return predictions;
  predictions.graph_edges = model->graph.size();
  predictions.assembled = assemble_through_best_graph(*animals, by_radius, dataset, train,
                                                      model->graph, assembly.assembly);
  for (std::size_t i = 0; i < dataset.images.size(); ++i) {
    predictions.slots.push_back(
        matched_slots(dataset, dataset.images[i], predictions.assembled.animals[i]));
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
    // A bodypart's colour (every individual's, in a multi-animal project).
    const auto color = [&](std::size_t slot) { return colors[slot % colors.size()]; };
    for (std::size_t j = 0; j < image.x.size(); ++j)
      markers.push_back({image.x[j], image.y[j], MarkerShape::plus, color(j)});
    for (std::size_t j = 0; j < predictions[index].size(); ++j) {
      const KeypointPrediction& p = predictions[index][j];
      markers.push_back({p.x, p.y,
                         p.likelihood > values.pcutoff ? MarkerShape::dot : MarkerShape::cross,
                         color(j)});
    }
    draw_markers(rgb, markers, values.dotsize, values.alphavalue);
    const std::string png = encode_png(rgb, ChannelOrder::rgb);
    const std::size_t slash = image.path.rfind('/');
    const std::string video = image.path.substr(13, slash - 13);  // after "labeled-data/"
    write_file_atomically(
        folder / projects::evaluation_image_name(training, video, image.path.substr(slash + 1)),
        png);
  }
}

// The shuffle of every training fraction asked for, with its chosen snapshots; a wrong shuffle or
// snapshot index fails here, before any work.
std::vector<TrainedShuffle> find_trained_shuffles(const projects::ProjectConfig& config,
                                                  const EvaluateOptions& options) {
  const projects::ConfigValues& values = config.values();
  const projects::ProjectLayout layout(config.project_dir());
  const std::vector<double> fractions = options.training_fraction
                                            ? std::vector<double>{*options.training_fraction}
                                            : values.training_fraction;
  const projects::SnapshotIndex choice = options.snapshots.value_or(values.snapshot_index);
  std::vector<TrainedShuffle> shuffles;
  std::vector<std::string> untrained;
  for (const double fraction : fractions) {
    const fs::path model_dir =
        layout.model_dir(values.iteration, values.task, values.date, fraction, options.shuffle);
    const fs::path train_config = projects::pose_cfg_in(projects::model_train_dir(model_dir));
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
    shuffle.train_dir = projects::model_train_dir(model_dir);
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
  return shuffles;
}

// The backend of --precision's comparison; null for fp32, or where it computes in fp32 anyway.
std::unique_ptr<nets::Backend> comparison_backend(const EvaluateOptions& options) {
  if (options.precision == nets::PlanPrecision::fp32) return nullptr;
  auto reduced = devices::make_backend(options.device, options.precision);
  if (reduced->plan_precision() == nets::PlanPrecision::fp32) {
    console::info("--precision {}: {} computes in fp32 here, so there is nothing to compare",
                  nets::precision_name(options.precision), reduced->name());
    return nullptr;
  }
  return reduced;
}

// What every snapshot of one shuffle is evaluated on.
struct ShuffleImages {
  Dataset dataset;
  std::vector<std::size_t> train, test;
  fs::path folder;  // the shuffle's evaluation folder
  DecodeSettings settings;
};

ShuffleImages read_shuffle_images(const projects::ProjectConfig& config, int shuffle_number,
                                  const TrainedShuffle& shuffle) {
  const projects::ConfigValues& values = config.values();
  const fs::path project = config.project_dir();
  ShuffleImages images;
  images.dataset = read_dataset(project / shuffle.pose.dataset, project);
  const fs::path split_file = project / shuffle.pose.split;
  const Split split = read_split(split_file);
  images.train = indices_of(images.dataset, split.train, split_file);
  images.test = indices_of(images.dataset, split.test, split_file);
  images.folder = projects::ProjectLayout(project).evaluation_dir(
      values.iteration, values.task, values.date, shuffle.fraction, shuffle_number);
  images.settings = {shuffle.pose.stride, shuffle.pose.locref_stdev,
                     shuffle.pose.location_refinement};
  const std::string note = small_test_set_note(
      images.test.size(),
      projects::shuffle_folder_name(values.task, values.date, shuffle.fraction, shuffle_number));
  if (!note.empty()) console::warn("{}", note);
  return images;
}

void create_folder(const fs::path& folder) {
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) {
    throw Error(fmt::format("cannot create the folder {}: {}", folder.string(), error.message()),
                "check that you may write to the project folder");
  }
}

// The snapshot's result files (and plots), each written atomically; fills result.written.
void write_results(const projects::ConfigValues& values, const ShuffleImages& images,
                   const Predictions& predictions, const fs::path& project, bool plot,
                   const fs::path& combined, const fs::path& test_config,
                   SnapshotEvaluation& result) {
  const fs::path& folder = images.folder;
  create_folder(folder);
  const fs::path table_file =
      folder / projects::evaluation_predictions_name(result.scorer, result.snapshot);
  projects::write_table_hdf5(predictions_table(images.dataset, predictions.slots, result.scorer),
                             table_file);
  const EvaluationRow row{result.iterations,
                          projects::training_fraction_percent(result.training_fraction),
                          result.shuffle,
                          result.train.mean,
                          result.test.mean,
                          values.pcutoff,
                          result.train.mean_pcutoff,
                          result.test.mean_pcutoff};
  const fs::path results_file = folder / projects::evaluation_results_name(result.scorer);
  write_file_atomically(results_file, evaluation_results_csv({row}));
  const fs::path keypoint_file = folder / projects::keypoint_results_name(result.scorer);
  write_file_atomically(keypoint_file,
                        keypoint_results_csv(images.dataset.bodyparts, result.train, result.test));
  merge_combined_evaluation(combined, {row});
  result.written = {table_file, results_file, keypoint_file, combined};
  if (result.assembly) {
    const fs::path assembly_file = folder / projects::assembly_results_name(result.scorer);
    write_file_atomically(assembly_file,
                          assembly_results_csv(row, result.assembly->train, result.assembly->test));
    result.written.push_back(assembly_file);
    write_paf_best(test_config, result.assembly->paf_best);
    if (result.assembly->nms_radius_chosen)
      write_chosen_nms_radius(test_config, result.assembly->nms_radius);
    result.written.push_back(test_config);
  }
  if (plot) {
    const fs::path plots =
        folder / projects::labeled_images_folder_name(result.scorer, result.snapshot);
    create_folder(plots);
    const auto colors = colormap_colors(values.colormap, images.dataset.bodyparts.size());
    plot_frames(images.dataset, images.test, false, predictions.slots, project, plots, colors,
                values);
    plot_frames(images.dataset, images.train, true, predictions.slots, project, plots, colors,
                values);
    result.written.push_back(plots);
  }
}

// A snapshot's result before its errors: which snapshot, of what, on how many images.
SnapshotEvaluation describe_snapshot(const projects::ConfigValues& values, int shuffle_number,
                                     const TrainedShuffle& shuffle, const SnapshotFile& snapshot,
                                     const LoadedSnapshot& loaded, const ShuffleImages& images) {
  if (loaded.metadata.bodyparts != images.dataset.bodyparts) {
    throw Error(fmt::format("{} predicts the bodyparts {}, but the training set {} has {}",
                            snapshot.path.string(), fmt::join(loaded.metadata.bodyparts, ", "),
                            shuffle.pose.dataset, fmt::join(images.dataset.bodyparts, ", ")),
                "the labels changed since training: train again (or evaluate another shuffle)");
  }
  SnapshotEvaluation result;
  result.training_fraction = shuffle.fraction;
  result.shuffle = shuffle_number;
  result.iterations = snapshot.iteration;
  result.snapshot = snapshot.path.stem().string();
  result.scorer = projects::scorer_name(loaded.metadata.architecture, values.task, values.date,
                                        shuffle_number, snapshot.iteration);
  result.bodyparts = images.dataset.bodyparts;
  result.pcutoff = values.pcutoff;
  result.train_images = images.train.size();
  result.test_images = images.test.size();
  result.folder = images.folder;
  return result;
}

}  // namespace

std::vector<SnapshotEvaluation> evaluate_network(const projects::ProjectConfig& config,
                                                 const EvaluateOptions& options) {
  const projects::ConfigValues& values = config.values();
  const fs::path project = config.project_dir();
  const std::vector<TrainedShuffle> shuffles = find_trained_shuffles(config, options);
  const fs::path combined =
      projects::ProjectLayout(project).evaluation_iteration_dir(values.iteration) /
      projects::combined_evaluation_name();
  check_combined_evaluation(combined);
  const auto backend = devices::make_backend(options.device);
  const std::unique_ptr<nets::Backend> reduced = comparison_backend(options);
  std::vector<SnapshotEvaluation> results;
  for (const TrainedShuffle& shuffle : shuffles) {
    const ShuffleImages images = read_shuffle_images(config, options.shuffle, shuffle);
    const Dataset& dataset = images.dataset;
    for (const SnapshotFile& snapshot : shuffle.snapshots) {
      const LoadedSnapshot loaded = read_snapshot(snapshot.path);
      SnapshotEvaluation result =
          describe_snapshot(values, options.shuffle, shuffle, snapshot, loaded, images);
      const std::string label =
          fmt::format("{} {}",
                      projects::shuffle_folder_name(values.task, values.date, shuffle.fraction,
                                                    options.shuffle),
                      result.snapshot);
      const Predictions predictions = predict_all(*backend, loaded, snapshot.path, images.settings,
                                                  dataset, images.train, project, label);
      result.train = summarize_errors(dataset, images.train,
                                      subset(predictions.slots, images.train), values.pcutoff);
      result.test = summarize_errors(dataset, images.test, subset(predictions.slots, images.test),
                                     values.pcutoff);
      if (loaded.metadata.multi_animal) {
        result.assembly = evaluate_assemblies(dataset, images.train, images.test,
                                              predictions.assembled, predictions.graph_edges);
      }
      if (reduced) {
        const nets::PlanPrecision precision = reduced->plan_precision();
        const Predictions other =
            predict_all(*reduced, loaded, snapshot.path, images.settings, dataset, images.train,
                        project, fmt::format("{} in {}", label, nets::precision_name(precision)));
        result.reduced = ReducedPrecisionEvaluation{
            precision,
            summarize_errors(dataset, images.train, subset(other.slots, images.train),
                             values.pcutoff),
            summarize_errors(dataset, images.test, subset(other.slots, images.test),
                             values.pcutoff),
            keypoint_shift(predictions.slots, other.slots, values.pcutoff)};
      }
      write_results(values, images, predictions, project, options.plot, combined,
                    projects::pose_cfg_in(projects::test_dir_beside(shuffle.train_dir)), result);
      results.push_back(std::move(result));
    }
  }
  return results;
}

}  // namespace labpose::pipeline
