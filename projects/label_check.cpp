// Label validation: columns, rows, images, coordinates; project-level video bookkeeping.
#include "projects/label_check.hpp"

#include <fmt/core.h>

#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/printable.hpp"
#include "projects/image_header.hpp"
#include "projects/layout.hpp"
#include "projects/project.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;
namespace {

bool is_image(const fs::path& path) {
  std::string extension = path.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".png" || extension == ".jpg" || extension == ".jpeg";
}

void check_folder(const ProjectConfig& config, FolderReport& report) {
  const auto error = [&](std::string message, std::string hint = {}) {
    report.findings.push_back({Finding::Severity::error, std::move(message), std::move(hint)});
  };
  const auto warning = [&](std::string message, std::string hint = {}) {
    report.findings.push_back({Finding::Severity::warning, std::move(message), std::move(hint)});
  };
  const std::string stem = report.folder.filename().string();
  std::set<std::string> images;
  std::error_code fs_error;
  for (const auto& entry : fs::directory_iterator(report.folder, fs_error)) {
    if (entry.is_regular_file(fs_error) && is_image(entry.path()))
      images.insert(entry.path().filename().string());
  }
  report.images = images.size();

  const std::string& scorer = config.values().scorer;
  for (const auto& other : label_scorers(report.folder)) {
    if (other != scorer) {
      warning(fmt::format(
          "{}: has labels by another scorer ({}); they are kept but not used for this project's "
          "scorer {}",
          report.folder.string(), other, scorer));
    }
  }
  const LabelFiles files = label_files(report.folder, scorer);
  if (!files.any_exists()) return;

  LoadedLabels loaded;
  try {
    loaded = read_labels(files);
  } catch (const Error& failure) {
    error(failure.what(), failure.hint());
    return;
  }
  report.label_file = loaded.source;
  for (const auto& note : loaded.notes) warning(report.folder.string() + ": " + note);
  const Table& table = loaded.table;
  std::vector<Finding> column_findings;
  try {
    column_findings = check_label_columns(table, config, loaded.source, scorer);
  } catch (const Error& failure) {
    error(failure.what(), failure.hint());
    return;
  }
  report.findings.insert(report.findings.end(), column_findings.begin(), column_findings.end());
  const auto keypoints = keypoint_columns(table, loaded.source);

  const bool csv_source = loaded.source.extension() == ".csv";
  const std::size_t header_lines = table.column_level_names.size();
  std::set<std::string> seen;
  std::size_t out_of_bounds = 0;
  std::string first_out_of_bounds;
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    const ImageKey key = image_key(table, row);
    const std::string where =
        csv_source ? fmt::format("{}:{}", loaded.source.string(), header_lines + row + 1)
                   : fmt::format("{}: row {}", loaded.source.string(), row + 1);
    const std::string path = printable(table.row_path(row), 300);  // from the file: escaped
    if (!seen.insert(key.stem + "/" + key.image).second) {
      error(fmt::format("{}: the image {} is listed twice", where, path),
            "keep one row per image; delete the duplicate line");
      continue;
    }
    if (key.stem != stem) {
      warning(
          fmt::format("{}: the row names video folder \"{}\" but the file is in labeled-data/{}",
                      where, printable(key.stem, 200), stem));
    }
    const fs::path image = config.project_dir() / "labeled-data" / key.stem / key.image;
    const bool image_exists = fs::is_regular_file(image, fs_error);
    if (!image_exists) {
      error(fmt::format("{}: the image {} does not exist", where, path),
            "restore the image, or delete its row if the frame was removed on purpose");
    }
    ImageSize size;  // zero when unknown (not a PNG/JPEG, or the image is missing)
    if (image_exists) size = read_image_size(image).value_or(ImageSize{});
    const bool known_size = size.width > 0 && size.height > 0;
    bool any = false;
    for (const auto& keypoint : keypoints) {
      const double x = table.at(row, keypoint.x), y = table.at(row, keypoint.y);
      if (std::isnan(x) != std::isnan(y)) {
        error(fmt::format("{}: {} has only {} set", where, printable(keypoint.bodypart, 80),
                          std::isnan(x) ? "y" : "x"),
              "a point needs both coordinates; set the other or clear both");
        continue;
      }
      if (std::isnan(x)) continue;
      any = true;
      ++report.labeled_points;
      if (!std::isfinite(x) || !std::isfinite(y) || x < 0 || y < 0 ||
          (known_size && (x >= size.width || y >= size.height))) {
        if (out_of_bounds++ == 0) {
          std::string image_size;
          if (known_size) image_size = fmt::format("{}x{} ", size.width, size.height);
          first_out_of_bounds = fmt::format("{}: {} at ({}, {}) is outside the {}image", where,
                                            printable(keypoint.bodypart, 80), x, y, image_size);
        }
      }
    }
    if (any) ++report.labeled_frames;
  }
  report.rows = table.row_count();
  if (out_of_bounds > 0) {
    warning(out_of_bounds == 1 ? first_out_of_bounds
                               : fmt::format("{} (and {} more points outside their image)",
                                             first_out_of_bounds, out_of_bounds - 1),
            "such points are ignored when training; move them onto the image or delete them");
  }
}

}  // namespace

std::size_t CheckReport::count(Finding::Severity severity) const {
  std::size_t total = 0;
  for (const auto& finding : project_findings) total += finding.severity == severity ? 1 : 0;
  for (const auto& folder : folders) {
    for (const auto& finding : folder.findings) total += finding.severity == severity ? 1 : 0;
  }
  return total;
}

CheckReport check_project_labels(const ProjectConfig& config) {
  CheckReport report;
  for (const auto& warning : config.warnings()) {
    report.project_findings.push_back({Finding::Severity::warning, warning, {}});
  }
  const ProjectLayout layout(config.project_dir());
  std::set<std::string> video_stems;
  for (const auto& video : config.values().video_sets) {
    const std::string stem = video_stem(video.key);
    video_stems.insert(stem);
    if (!resolve_video(config, video.key)) {
      report.project_findings.push_back(
          {Finding::Severity::warning,
           fmt::format("{}: the video {} is not there (nor in {})", config.file().string(),
                       video.key, layout.videos_dir().string()),
           "labels are unaffected, but extracting frames and analyzing need the video; fix the "
           "path under "
           "video_sets or add it again with labpose add-videos"});
    }
  }
  for (const auto& folder : layout.labeled_folders()) {
    FolderReport folder_report;
    folder_report.folder = folder;
    check_folder(config, folder_report);
    if (video_stems.count(folder.filename().string()) == 0 && folder_report.rows > 0) {
      folder_report.findings.push_back(
          {Finding::Severity::warning,
           fmt::format("labeled-data/{} has no video in video_sets of config.yaml",
                       folder.filename().string()),
           "DeepLabCut's create_training_dataset skips such folders; add the video with labpose "
           "add-videos"});
    }
    report.folders.push_back(std::move(folder_report));
  }
  return report;
}

}  // namespace labpose::projects
