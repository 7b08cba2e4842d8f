// The one place that knows DeepLabCut's folder and file names (reference/dlc-format.md §0, §1):
// project folders, the `date` key, labeled-data folders, label files, training-fraction tags and
// frame image names. Every other file asks here instead of building paths itself.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace labpose::projects {

/// "Oct30", "Jan5": English month abbreviation + day without zero padding (config key `date`).
std::string config_date(std::chrono::year_month_day day);
/// "<Task>-<scorer>-<YYYY-MM-DD>".
std::string project_folder_name(std::string_view task, std::string_view scorer,
                                std::chrono::year_month_day day);
/// Today in local time.
std::chrono::year_month_day today();

/// int(100 * fraction) in IEEE double, truncated as DeepLabCut does: 0.95 -> 95, 0.29 -> 28.
int training_fraction_percent(double fraction);
/// "<Task><date>-trainset<percent>shuffle<shuffle>".
std::string shuffle_folder_name(std::string_view task, std::string_view date, double fraction,
                                int shuffle);

/// "img" + index zero-padded to ceil(log10(frame_count)) digits + ".png".
std::string frame_image_name(std::int64_t index, std::int64_t frame_count);
/// The frame index in an extracted frame's name ("img0042.png" -> 42, whatever the padding);
/// nullopt for any other name.
std::optional<std::int64_t> frame_index_of_image(std::string_view name);
/// "machinelabels-iter<iteration>.h5": a network's predictions at the frames extract-outliers
/// wrote into a labeled-data folder, for refinement.
std::string machine_labels_h5_name(int iteration);
/// "machinelabels.csv": the same predictions as CSV.
std::string machine_labels_csv_name();
/// The iteration in a machine_labels_h5_name() ("machinelabels-iter3.h5" -> 3); nullopt for any
/// other name.
std::optional<int> machine_labels_iteration(std::string_view name);

/// The video's file name without extension (Python's Path.stem); handles Windows separators.
std::string video_stem(std::string_view path);
/// The file name part of a path written on any OS ("C:\\v\\a.avi" -> "a.avi").
std::string portable_file_name(std::string_view path);

/// True for the video file extensions DeepLabCut scans folders for (case-insensitive).
bool has_video_extension(const std::filesystem::path& path);
/// The videos in `folder` (not recursive), sorted, without DeepLabCut's own *_labeled / *_full
/// outputs.
std::vector<std::filesystem::path> videos_in_folder(const std::filesystem::path& folder);
/// True for a name (without extension) DeepLabCut gives its drawings: "<name>_labeled" (labeled
/// videos, check_labels' labeled-data/<video>_labeled/ folders).
bool is_labeled_output(std::string_view stem);

// What filter, labeled-video and plot-trajectories write beside a video's tracks
// (reference/dlc-format.md §6.10-6.12). `tracks` is the analysis table, e.g.
// <video>DLC_<scorer>.h5.
/// "<dir>/<stem>_filtered.h5" for the tracks "<dir>/<stem>.h5".
std::filesystem::path filtered_tracks_path(const std::filesystem::path& tracks);
/// "<dir>/<stem><colouring>_p<int(100 pcutoff)>_labeled.mp4" for the tracks "<dir>/<stem>.h5";
/// `colouring` is empty for one animal, "_id" or "_bp" for tracks of several coloured by
/// individual or by bodypart (DeepLabCut's color_by).
std::filesystem::path labeled_video_path(const std::filesystem::path& tracks, double pcutoff,
                                         std::string_view colouring = {});
/// "<folder>/plot-poses/<video stem>": the folder of a video's trajectory figures.
std::filesystem::path trajectory_plots_folder(const std::filesystem::path& folder,
                                              std::string_view video_stem);
/// "trajectory.png", "plot.png", "plot-likelihood.png", "hist.png", with "_filtered" and then the
/// individual (multi-animal tracks) before ".png", as DeepLabCut: "trajectory_filteredmouse1.png".
std::vector<std::string> trajectory_plot_names(bool filtered, std::string_view individual = {});

/// Paths inside one project folder.
class ProjectLayout {
 public:
  explicit ProjectLayout(std::filesystem::path root) : root_(std::move(root)) {}

  const std::filesystem::path& root() const { return root_; }
  std::filesystem::path config_file() const { return root_ / "config.yaml"; }
  std::filesystem::path videos_dir() const { return root_ / "videos"; }
  std::filesystem::path labeled_data_dir() const { return root_ / "labeled-data"; }
  std::filesystem::path labeled_data_folder(std::string_view stem) const;
  /// labeled-data/<stem>_labeled: check_labels' drawings of the labels of video `stem`.
  std::filesystem::path checked_labels_folder(std::string_view stem) const;
  std::filesystem::path training_datasets_dir() const { return root_ / "training-datasets"; }
  std::filesystem::path dlc_models_dir() const { return root_ / "dlc-models"; }
  std::filesystem::path labpose_models_dir() const { return root_ / "labpose-models"; }

  // Training sets, models and evaluations of one active-learning iteration (DeepLabCut's layout,
  // with labpose's models and evaluations beside DeepLabCut's so neither misreads the other's).
  /// training-datasets/iteration-<K>/UnaugmentedDataSet_<Task><date>/
  std::filesystem::path training_set_dir(int iteration, std::string_view task,
                                         std::string_view date) const;
  /// labpose-models/iteration-<K>/<Task><date>-trainset<P>shuffle<S>/ (train/ and test/ inside)
  std::filesystem::path model_dir(int iteration, std::string_view task, std::string_view date,
                                  double fraction, int shuffle) const;
  /// labpose-evaluation-results/iteration-<K>/
  std::filesystem::path evaluation_iteration_dir(int iteration) const;
  /// labpose-evaluation-results/iteration-<K>/<Task><date>-trainset<P>shuffle<S>/
  std::filesystem::path evaluation_dir(int iteration, std::string_view task, std::string_view date,
                                       double fraction, int shuffle) const;

  /// The folders of labeled-data/ that hold frames of a video (not `<stem>_labeled`, not hidden),
  /// sorted by name.
  std::vector<std::filesystem::path> labeled_folders() const;

 private:
  std::filesystem::path root_;
};

/// "Documentation_data-<Task>_<P>shuffle<S>.pickle" (DeepLabCut's record of a split).
std::string documentation_pickle_name(std::string_view task, double fraction, int shuffle);
/// "<Task>_<scorer><P>shuffle<S>.pickle": a multi-animal project's training set (DeepLabCut's).
std::string multi_animal_training_set_name(std::string_view task, std::string_view scorer,
                                           double fraction, int shuffle);
/// "labpose-split-<P>shuffle<S>.json": the split by image path, which labpose reads back.
std::string split_file_name(double fraction, int shuffle);
/// "snapshot-<iteration>.safetensors" and "snapshot-best-<iteration>.safetensors".
std::string snapshot_file_name(std::int64_t iteration, bool best = false);

// A shuffle's model folder (ProjectLayout::model_dir) as DeepLabCut lays it out: train/ (the
// training's pose_cfg.yaml and the snapshots) and test/ (the pose_cfg.yaml of inference and, in a
// multi-animal project, inference_cfg.yaml).
/// "<model dir>/train".
std::filesystem::path model_train_dir(const std::filesystem::path& model_dir);
/// "<model dir>/test".
std::filesystem::path model_test_dir(const std::filesystem::path& model_dir);
/// "<train dir>/../test": the test folder beside a train folder.
std::filesystem::path test_dir_beside(const std::filesystem::path& train_dir);
/// "<folder>/pose_cfg.yaml": in train/ or test/, and beside an exported model's snapshot.
std::filesystem::path pose_cfg_in(const std::filesystem::path& folder);
/// "<test dir>/inference_cfg.yaml": a multi-animal model's assembly and tracking settings.
std::filesystem::path inference_cfg_in(const std::filesystem::path& test_dir);

/// "metadata.yaml": DeepLabCut 3's registry of the shuffles of a training-set folder.
std::string training_set_metadata_name();

/// DeepLabCut's TensorFlow-style network name in scorer names: resnet_50 -> resnet50,
/// mobilenet_v2_1.0 -> mobnet_100, mobilenet_v2_0.35 -> mobnet_35, efficientnet_lite0 ->
/// effnet_lite0 (as efficientnet-b3 -> effnet_b3; others: underscores removed).
std::string scorer_net_name(std::string_view net_type);
/// "DLC_<net>_<Task><date>shuffle<S>_<iterations>", the scorer of a network's predictions (column
/// level `scorer` of evaluation and analysis tables, and the stem of their file names).
std::string scorer_name(std::string_view net_type, std::string_view task, std::string_view date,
                        int shuffle, std::int64_t iterations);

// An evaluation folder's files (reference/dlc-format.md §6.8); `snapshot` is the snapshot's file
// stem, e.g. "snapshot-50000".
/// "CombinedEvaluation-results.csv" (in the iteration folder).
std::string combined_evaluation_name();
/// "<scorer>-results.csv".
std::string evaluation_results_name(std::string_view scorer);
/// "<scorer>-assembly-results.csv": a multi-animal model's mAP and mAR (labpose's file).
std::string assembly_results_name(std::string_view scorer);
/// "<scorer>-keypoint-results.csv".
std::string keypoint_results_name(std::string_view scorer);
/// "<scorer>-<snapshot>.h5": the predictions on every labeled image.
std::string evaluation_predictions_name(std::string_view scorer, std::string_view snapshot);
/// "LabeledImages_<scorer>_<snapshot>": the folder of plotted frames.
std::string labeled_images_folder_name(std::string_view scorer, std::string_view snapshot);
/// "Training-<video>-<image>" or "Test-<video>-<image>" (image with its extension).
std::string evaluation_image_name(bool training, std::string_view video, std::string_view image);

/// "CollectedData_<scorer>.csv" / ".h5".
std::string collected_data_csv_name(std::string_view scorer);
std::string collected_data_h5_name(std::string_view scorer);

// ---- video analysis outputs
// DeepLabCut's analyze_videos names a video's outputs "<video stem><scorer>" + a suffix
// (reference/dlc-format.md §6.9); labpose's metadata and checkpoint follow the same rule.
/// "<stem><scorer>.h5": the tracks (pandas, key df_with_missing).
std::string analysis_h5_name(std::string_view video_stem, std::string_view scorer);
/// "<stem><scorer>.csv": the same tracks as text.
std::string analysis_csv_name(std::string_view video_stem, std::string_view scorer);
/// "<stem><scorer>_meta.pickle": DeepLabCut's metadata of the analysis.
std::string analysis_meta_pickle_name(std::string_view video_stem, std::string_view scorer);
/// "<stem><scorer>_meta.json": labpose's record of the analysis.
std::string analysis_meta_json_name(std::string_view video_stem, std::string_view scorer);
/// "<stem><scorer>.labpose-checkpoint": the rows of an unfinished analysis.
std::string analysis_checkpoint_name(std::string_view video_stem, std::string_view scorer);

}  // namespace labpose::projects
