// Making and extending projects: `labpose create` and `labpose add-videos` (DeepLabCut's
// create_new_project / add_new_videos). All inputs are checked before anything is written; a
// project folder appears whole or not at all. Video probing is the caller's (pipeline/video), not
// ours.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "projects/config.hpp"

namespace labpose::projects {

/// A video the caller has opened and measured.
struct VideoInput {
  std::filesystem::path path;
  int width = 0, height = 0;
};

struct CreateProjectOptions {
  std::string task, scorer;
  std::vector<VideoInput> videos;
  std::filesystem::path working_dir = ".";
  bool copy_videos = false;
  std::chrono::year_month_day date;
  bool multi_animal = false;             // DeepLabCut's multi-animal project
  std::vector<std::string> individuals;  // multi-animal: the animals' names (empty: DeepLabCut's)
};

/// Checks the names of a multi-animal project's individuals: each a valid name (check_name), none
/// twice, none "single" (DeepLabCut's name for the unique bodyparts). Throws UsageError.
void check_individuals(const std::vector<std::string>& individuals);

/// Creates <working_dir>/<Task>-<scorer>-<date>/ with config.yaml, videos/ (symlinks or copies),
/// labeled-data/<stem>/ per video, training-datasets/ and dlc-models/. Returns the config path.
std::filesystem::path create_project(const CreateProjectOptions& options);

struct AddVideosResult {
  std::vector<std::string> added;    // video stems
  std::vector<std::string> skipped;  // already in the project
};

/// Adds videos to an existing project (links or copies in videos/, labeled-data folders,
/// video_sets entries with the full frame as crop). Videos already present are skipped.
AddVideosResult add_videos(ProjectConfig& config, const std::vector<VideoInput>& videos,
                           bool copy_videos);

/// The file behind a video_sets key: the path itself, or the same file name in the project's
/// videos/ folder (projects moved between machines keep stale absolute paths).
std::optional<std::filesystem::path> resolve_video(const ProjectConfig& config,
                                                   const std::string& key);

/// Throws a usage error unless `name` can be part of folder and file names.
void check_name(const std::string& what, const std::string& name);

}  // namespace labpose::projects
