// `labpose check-labels`, the validation part: every labeled-data folder's labels against the
// config and the images on disk, plus the project-level consistency DeepLabCut users trip over
// (videos that moved, folders without a video). Reports findings; changes nothing.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "projects/config.hpp"
#include "projects/labels.hpp"

namespace labpose::projects {

struct FolderReport {
  std::filesystem::path folder;
  std::filesystem::path label_file;  // the file that was read; empty when the folder has no labels
  std::size_t images = 0;            // image files in the folder
  std::size_t rows = 0;              // label rows
  std::size_t labeled_frames = 0;    // rows with at least one labeled point
  std::size_t labeled_points = 0;
  std::vector<Finding> findings;
};

struct CheckReport {
  std::vector<Finding> project_findings;
  std::vector<FolderReport> folders;
  std::size_t count(Finding::Severity severity) const;
};

CheckReport check_project_labels(const ProjectConfig& config);

}  // namespace labpose::projects
