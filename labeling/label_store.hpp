// The labels the labeling page edits: one point at a time, applied under a lock to what is on disk
// now (never a whole table sent by a page), written to CollectedData_<scorer>.csv and .h5 through
// the project model with backups. What the files hold is decided by label_files.hpp, which refuses
// to save over a file it cannot read or reconcile. Points other scorers wrote are merged in, never
// dropped. A point is a keypoint (label_columns.hpp: individual and bodypart) of one image, in
// single- and multi-animal projects alike. Not HTTP: request_handler.cpp turns requests into
// these calls.
#pragma once

#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "labeling/label_columns.hpp"
#include "labeling/label_files.hpp"
#include "labeling/session_backup.hpp"
#include "projects/config.hpp"
#include "projects/table.hpp"

namespace labpose::labeling {

/// A request the store refuses, with the HTTP status that says why (400 bad input, 403 outside
/// the project, 404 no such video/frame/bodypart, 409 the labels cannot be read or reconciled).
class RequestError : public Error {
 public:
  RequestError(int status, const std::string& message, std::string hint = {})
      : Error(message, std::move(hint)), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

struct Point {
  double x = 0, y = 0;  // pixels in the image, origin at the top-left corner
};

struct MachinePoint {
  double x = 0, y = 0, likelihood = 0;
};

/// One frame's points, in LabelStore::keypoints() order.
struct FrameLabels {
  std::string video, image;
  std::vector<std::optional<Point>> points;
  std::vector<std::optional<MachinePoint>> machine;  // the network's, with --refine; else empty
  int width = 0, height = 0;                         // the image's size (0 when unreadable)
};

struct FrameSummary {
  std::string image;
  std::size_t labeled = 0;  // keypoints (of every individual) with a point
  bool machine = false;     // the network's predictions exist for it (machinelabels)
};

struct VideoSummary {
  std::string stem;
  std::vector<FrameSummary> frames;  // the images in labeled-data/<stem>/, sorted by name
  std::string problem;  // why its labels cannot be shown (then no frame counts as labeled)
};

/// What merge_other_scorers() did in one folder.
struct MergeNote {
  std::string video, source;  // the other scorer's file name
  std::size_t points = 0;     // points added to this scorer's labels
};

class LabelStore {
 public:
  /// A single- or multi-animal project. `refine`: show machinelabels-iter<K>.h5 predictions for
  /// frames that have them.
  LabelStore(const projects::ProjectConfig& config, bool refine);

  /// config.yaml's keypoints in DeepLabCut's column order (config_keypoints()).
  const std::vector<Keypoint>& keypoints() const { return keypoints_; }
  /// A multi-animal project's individuals, then "single" when it has unique bodyparts; empty in a
  /// single-animal project.
  const std::vector<std::string>& individuals() const { return individuals_; }
  const projects::ProjectConfig& config() const { return config_; }
  bool refine() const { return refine_; }

  /// Every labeled-data folder with its images and how many keypoints each has.
  std::vector<VideoSummary> videos() const;
  /// The frame's points as on disk now.
  FrameLabels frame(std::string_view video, std::string_view image) const;
  /// Places or moves one keypoint (x, y in pixels inside the image) and saves at once.
  FrameLabels set_point(std::string_view video, std::string_view image, const Keypoint& keypoint,
                        double x, double y);
  /// The same for a bodypart of a single-animal project (a keypoint without individual).
  FrameLabels set_point(std::string_view video, std::string_view image, std::string_view bodypart,
                        double x, double y) {
    return set_point(video, image, Keypoint{"", std::string(bodypart)}, x, y);
  }
  /// Removes one keypoint's point and saves at once (nothing to do when it has none).
  FrameLabels delete_point(std::string_view video, std::string_view image,
                           const Keypoint& keypoint);
  /// Gives the point of `keypoint` to another individual: it becomes `to_individual`'s same
  /// bodypart, and `keypoint` has none. Refused (409) when the frame has no such point or
  /// `to_individual` already has that bodypart there; 400/404 when it has no such bodypart.
  FrameLabels move_to_individual(std::string_view video, std::string_view image,
                                 const Keypoint& keypoint, std::string_view to_individual);
  /// Turns the network's points of the frame into human labels for every keypoint that has no
  /// human label yet (--refine), and saves.
  FrameLabels accept_machine(std::string_view video, std::string_view image);

  /// The image file of a frame after every check: a plain name of an existing image in a
  /// labeled-data folder whose real path (symlinks resolved) is inside the project.
  std::filesystem::path image_path(std::string_view video, std::string_view image) const;

  /// Fills points this scorer has not labeled from other scorers' CollectedData files, once per
  /// version of such a file (recorded in .labpose-backups/merged.txt, so a point deleted later
  /// does not come back). Their files are left as they are.
  std::vector<MergeNote> merge_other_scorers();

  /// Where the files of a folder were before this store first changed them.
  std::filesystem::path session_backup_dir(std::string_view video) const;

  /// For tests: called after a change has read the files and before it writes anything (what an
  /// editor saving at that very moment would do).
  void set_before_write_hook(std::function<void()> hook) {
    std::lock_guard lock(mutex_);
    before_write_ = std::move(hook);
  }

 private:
  std::filesystem::path folder_of(std::string_view video) const;
  // labeled-data's folders whose real path (symlinks resolved) is inside the project.
  std::vector<std::filesystem::path> labeled_folders() const;
  // The scorer's labels in a folder as label_files.hpp decides them, config's bodyparts added as
  // columns where missing.
  LoadedLabels load(const std::filesystem::path& folder) const;
  // Writes `table` over the files `loaded` read, after the session backup and the .bak of each
  // file that was read; refuses when a file changed since it was read.
  void save(const LoadedLabels& loaded, const projects::Table& table);
  FrameLabels frame_locked(const std::filesystem::path& folder, std::string_view video,
                           std::string_view image, const projects::Table& table) const;
  std::optional<projects::Table> machine_labels(const std::filesystem::path& folder) const;
  // Throws RequestError unless `keypoint` is one of config.yaml's.
  void check_keypoint(const Keypoint& keypoint) const;

  projects::ProjectConfig config_;
  bool refine_;
  std::vector<Keypoint> keypoints_;
  std::vector<std::string> individuals_;
  std::filesystem::path project_root_;  // canonical
  mutable std::mutex mutex_;
  SessionBackups backups_;
  std::function<void()> before_write_;
};

}  // namespace labpose::labeling
