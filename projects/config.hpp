// The project's config.yaml: read DeepLabCut's 2.x/3.x dialects as they are, validate every key we
// know (errors name file:line:col and the key), keep unknown keys, and write back in DeepLabCut's
// key order and style. Not the training configuration (pose_cfg.yaml), which lives with each model.
#pragma once

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace labpose::projects {

/// A crop box in pixels, DeepLabCut's "x1, x2, y1, y2" (x1 < x2, y1 < y2, all >= 0).
struct CropBox {
  int x1 = 0, x2 = 0, y1 = 0, y2 = 0;
  std::string text() const;  // "0, 640, 0, 480"
  bool operator==(const CropBox&) const = default;
};
/// Parses "x1, x2, y1, y2"; nullopt when it is not four integers with x1 < x2, y1 < y2, >= 0.
std::optional<CropBox> parse_crop(std::string_view text);

struct VideoSet {
  std::string key;  // the path as written in config.yaml (absolute, maybe from another machine)
  std::optional<CropBox> crop;
  bool operator==(const VideoSet&) const = default;
};

struct SkeletonEdge {
  std::string from, to;
  bool operator==(const SkeletonEdge&) const = default;
};

/// `snapshotindex`: an index into the sorted snapshot list (-1 = last), or every snapshot, or the
/// best.
struct SnapshotIndex {
  enum class Kind { index, all, best };
  Kind kind = Kind::index;
  int index = -1;
  bool operator==(const SnapshotIndex&) const = default;
};

/// The validated values of config.yaml. Defaults are DeepLabCut's schema defaults for missing keys.
/// Whole numbers are range-checked on reading (see config.cpp), so they always fit an int.
struct ConfigValues {
  std::string task, scorer, date;
  bool multi_animal = false;
  std::optional<bool> identity;
  std::string project_path;  // as written in the file
  std::string engine;  // "pytorch", "tensorflow", or empty when the key is absent (old projects)
  std::vector<VideoSet> video_sets;
  std::vector<std::string> bodyparts;  // single-animal keypoints; empty for multi-animal projects
  std::vector<std::string> individuals, unique_bodyparts, multianimal_bodyparts;
  double start = 0.0, stop = 1.0;
  int numframes2pick = 20;
  std::vector<SkeletonEdge> skeleton;
  std::string skeleton_color = "black";
  double pcutoff = 0.6;
  int dotsize = 12;
  double alphavalue = 0.7;
  std::string colormap = "rainbow";
  std::vector<double> training_fraction = {0.95};
  int iteration = 0;
  std::string default_net_type = "resnet_50";
  std::string default_augmenter;
  std::string default_track_method;  // multi-animal: ellipse, box, skeleton; empty when absent
  SnapshotIndex snapshot_index;
  int detector_snapshot_index = -1;
  int batch_size = 8;
  int detector_batch_size = 1;
  bool cropping = false;
  std::optional<CropBox> crop;  // x1, x2, y1, y2 when all four are set
  std::optional<std::pair<int, int>> corner2move2;
  std::optional<bool> move2corner;
  bool operator==(const ConfigValues&) const = default;
};

/// What `labpose create` writes for a new single-animal project.
struct NewProjectSettings {
  std::string task, scorer, date;  // date as DeepLabCut writes it: "Nov22"
  std::filesystem::path project_dir;
  std::vector<VideoSet> video_sets;
  /// A multi-animal project, as DeepLabCut's create_new_project(multianimal=True) writes it:
  /// these individuals, multianimalbodyparts bodypart1-3 in a triangle skeleton, no unique
  /// bodyparts, bodyparts: MULTI!.
  bool multi_animal = false;
  std::vector<std::string> individuals;  // empty: individual1, individual2, individual3
};

/// The individuals DeepLabCut's create_new_project(multianimal=True) writes when none are given.
std::vector<std::string> default_individuals();

class ProjectConfig {
 public:
  /// Reads and validates a config.yaml; `project_path` is corrected in memory when the project has
  /// moved (see project_path_corrected()). Throws Error naming file:line:col.
  static ProjectConfig load(const std::filesystem::path& file);
  /// The same from text (no file access); `file` is used for messages and project_dir().
  static ProjectConfig parse(std::string_view text, const std::filesystem::path& file);
  /// A new project's config with every key DeepLabCut writes, in its order.
  static ProjectConfig new_project(const NewProjectSettings& settings,
                                   const std::filesystem::path& file);

  const ConfigValues& values() const { return values_; }
  const std::filesystem::path& file() const { return file_; }
  /// The folder that holds config.yaml (what project_path should say).
  std::filesystem::path project_dir() const;
  /// Every keypoint name: bodyparts (single animal) or multianimalbodyparts + uniquebodyparts.
  std::vector<std::string> keypoint_names() const;
  /// "file:line:col" of top-level `key` (of its item `item` when given, for a list), as loaded;
  /// the file alone when the key is not in it.
  std::string place(const std::string& key, std::optional<std::size_t> item = std::nullopt) const;
  /// Problems that do not stop work (unknown keys, a skeleton naming no bodypart, ...).
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// The old value when load() found project_path pointing elsewhere and corrected it.
  const std::optional<std::string>& project_path_corrected() const { return old_project_path_; }

  /// Adds a video to video_sets (key = absolute path inside <project>/videos/).
  void add_video_set(const VideoSet& video);
  void set_iteration(int iteration);
  /// Replaces a single-animal project's bodyparts. Throws Error (and changes nothing) for an
  /// empty list, repeated names or a multi-animal project.
  void set_bodyparts(const std::vector<std::string>& bodyparts);
  /// Replaces a multi-animal project's multianimalbodyparts and uniquebodyparts. Throws Error (and
  /// changes nothing) for a single-animal project, no keypoints, repeated names or a name in both.
  void set_multi_animal_bodyparts(const std::vector<std::string>& multianimal_bodyparts,
                                  const std::vector<std::string>& unique_bodyparts);
  /// Replaces the skeleton (pairs of bodyparts drawn as lines). Throws Error (and changes
  /// nothing) for a pair of one name twice.
  void set_skeleton(const std::vector<SkeletonEdge>& skeleton);
  /// Replaces TrainingFraction. Throws Error (and changes nothing) for an empty list or a fraction
  /// outside (0, 1].
  void set_training_fraction(const std::vector<double>& fractions);
  /// Sets default_net_type, the network of new shuffles.
  void set_default_net_type(const std::string& net_type);
  /// Sets a multi-animal project's identity (an identity head learns the individuals). Throws
  /// Error for a single-animal project.
  void set_identity(bool identity);
  /// Sets numframes2pick, the frames extract-frames picks per video.
  void set_numframes2pick(int frames);

  /// The file's text as it would be saved now.
  std::string to_yaml() const;
  /// Writes config.yaml atomically. When only scalar values changed, just those values are
  /// replaced in the original text, so comments and formatting survive; otherwise the whole file
  /// is written in DeepLabCut's layout.
  void save() const;

 private:
  ProjectConfig() = default;
  void validate();
  void set_scalar(const std::string& key, const YAML::Node& value);
  // Replaces top-level collections and validates, restoring the old ones if that fails.
  void set_collections(const std::vector<std::pair<std::string, YAML::Node>>& values);
  void set_collection(const std::string& key, const YAML::Node& value);

  std::filesystem::path file_;
  std::string original_text_;
  YAML::Node root_;
  ConfigValues values_;
  std::vector<std::string> warnings_;
  std::optional<std::string> old_project_path_;
  std::vector<std::string> edited_scalars_;  // keys whose scalar value changed since load
  bool structure_changed_ = false;
};

}  // namespace labpose::projects
