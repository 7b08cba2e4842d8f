// Point-by-point label edits on the files as they are on disk now.
#include "labeling/label_store.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/printable.hpp"
#include "projects/image_header.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::labeling {
namespace fs = std::filesystem;
using projects::Table;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A single file or folder name: no separators, not hidden, not "." or "..".
bool is_plain_name(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '.') return false;
  return name.find_first_of(std::string_view("/\\\0", 3)) == std::string_view::npos;
}

bool is_image_name(std::string_view name) {
  std::string extension = fs::path(name).extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return extension == ".png" || extension == ".jpg" || extension == ".jpeg";
}

// True when `path` (symlinks resolved) is `root` or inside it.
bool inside(const fs::path& root, const fs::path& path) {
  std::error_code error;
  const fs::path real = fs::canonical(path, error);
  if (error) return false;
  auto [root_end, real_end] = std::mismatch(root.begin(), root.end(), real.begin(), real.end());
  return root_end == root.end();
}

std::string now_stamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
  return text;
}

std::string file_version(const fs::path& file) {
  std::error_code error;
  const auto size = fs::file_size(file, error);
  const auto time = fs::last_write_time(file, error).time_since_epoch().count();
  return fmt::format("{} {} {}", file.filename().string(), size, time);
}

}  // namespace

LabelStore::LabelStore(const projects::ProjectConfig& config, bool refine)
    : config_(config),
      refine_(refine),
      keypoints_(config_keypoints(config.values())),
      backups_(now_stamp()) {
  if (config.values().multi_animal) {
    individuals_ = config.values().individuals;
    if (!config.values().unique_bodyparts.empty())
      individuals_.emplace_back(projects::kUniqueIndividual);
  }
  std::error_code error;
  project_root_ = fs::canonical(config.project_dir(), error);
  if (error) {
    throw Error(fmt::format("cannot open the project folder {}: {}", config.project_dir().string(),
                            error.message()));
  }
  const fs::path labeled_data = projects::ProjectLayout(project_root_).labeled_data_dir();
  if (fs::exists(labeled_data, error) && !inside(project_root_, labeled_data)) {
    console::warn(
        "{} leads out of the project (to {}): the labeling page shows none of its "
        "folders",
        labeled_data.string(), fs::canonical(labeled_data, error).string());
  }
}

fs::path LabelStore::folder_of(std::string_view video) const {
  if (!is_plain_name(video))
    throw RequestError(400, fmt::format("\"{}\" is not a labeled-data folder name", video));
  fs::path folder = projects::ProjectLayout(project_root_).labeled_data_folder(video);
  std::error_code error;
  if (!fs::is_directory(folder, error) || projects::is_labeled_output(video))
    throw RequestError(404, fmt::format("no labeled-data folder \"{}\"", video));
  if (!inside(project_root_, folder))
    throw RequestError(403, fmt::format("labeled-data/{} leads out of the project", video));
  return folder;
}

std::vector<fs::path> LabelStore::labeled_folders() const {
  std::vector<fs::path> folders = projects::ProjectLayout(project_root_).labeled_folders();
  std::erase_if(folders, [&](const fs::path& folder) { return !inside(project_root_, folder); });
  return folders;
}

fs::path LabelStore::image_path(std::string_view video, std::string_view image) const {
  const fs::path folder = folder_of(video);
  if (!is_plain_name(image) || !is_image_name(image))
    throw RequestError(400, fmt::format("\"{}\" is not an image name (.png, .jpg)", image));
  fs::path path = folder / image;
  std::error_code error;
  if (!fs::is_regular_file(path, error))
    throw RequestError(404, fmt::format("no image labeled-data/{}/{}", video, image));
  if (!inside(project_root_, path))
    throw RequestError(403,
                       fmt::format("labeled-data/{}/{} leads out of the project", video, image));
  return path;
}

fs::path LabelStore::session_backup_dir(std::string_view video) const {
  const fs::path folder = folder_of(video);
  std::lock_guard lock(mutex_);
  return backups_.dir(folder);
}

LoadedLabels LabelStore::load(const fs::path& folder) const {
  LoadedLabels loaded = load_labels(folder, config_.values().scorer, config_.values().multi_animal);
  add_missing_columns(loaded.table, table_scorer(loaded.table, config_.values().scorer),
                      keypoints_);
  return loaded;
}

void LabelStore::check_keypoint(const Keypoint& keypoint) const {
  if (std::find(keypoints_.begin(), keypoints_.end(), keypoint) != keypoints_.end()) return;
  if (individuals_.empty()) {
    if (!keypoint.individual.empty()) {
      throw RequestError(400, fmt::format("\"{}\" names an individual, but this is a "
                                          "single-animal project",
                                          printable(keypoint.individual, 80)));
    }
    throw RequestError(
        404, fmt::format("no bodypart \"{}\" in config.yaml", printable(keypoint.bodypart, 80)));
  }
  if (keypoint.individual.empty()) {
    throw RequestError(400, "this is a multi-animal project: a point needs its \"individual\"");
  }
  if (std::find(individuals_.begin(), individuals_.end(), keypoint.individual) ==
      individuals_.end()) {
    throw RequestError(
        404, fmt::format("no individual \"{}\" in config.yaml (it lists {})",
                         printable(keypoint.individual, 80), printable_list(individuals_)));
  }
  throw RequestError(
      404, fmt::format("{} has no bodypart \"{}\" in config.yaml ({})",
                       printable(keypoint.individual, 80), printable(keypoint.bodypart, 80),
                       keypoint.individual == projects::kUniqueIndividual
                           ? "its bodyparts are the uniquebodyparts"
                           : "the individuals' bodyparts are the multianimalbodyparts"));
}

void LabelStore::save(const LoadedLabels& loaded, const Table& table) {
  if (before_write_) before_write_();
  const auto& files = loaded.files;
  // Another program may have saved a file since it was read: its change would be lost.
  check_unchanged(loaded);
  backups_.ensure(files.csv.parent_path(), {files.csv, files.h5});
  // Only a file that was read rotates into its .bak: the .bak may be the last good copy.
  if (loaded.csv.exists && loaded.csv_read) keep_backup(files.csv);
  if (loaded.h5.exists && loaded.h5_read) keep_backup(files.h5);
  check_unchanged(loaded);  // again: the copies took a moment
  for (const auto& note : loaded.notes) console::info("{}", note);
  projects::write_labels(table, files);
  record_saved(files);
}

std::optional<Table> LabelStore::machine_labels(const fs::path& folder) const {
  if (!refine_) return std::nullopt;
  fs::path newest;
  int newest_iteration = -1;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    const std::optional<int> iteration = projects::machine_labels_iteration(name);
    if (iteration && *iteration > newest_iteration) {
      newest_iteration = *iteration;
      newest = entry.path();
    }
  }
  if (newest.empty()) return std::nullopt;
  try {
    return projects::read_table_hdf5(newest);
  } catch (const Error& failure) {
    console::warn("cannot read the network's labels {}: {}", newest.string(), failure.what());
    return std::nullopt;
  }
}

FrameLabels LabelStore::frame_locked(const fs::path& folder, std::string_view video,
                                     std::string_view image, const Table& table) const {
  FrameLabels frame;
  frame.video = video;
  frame.image = image;
  const auto columns = keypoint_columns_by_name(table);
  const auto row = find_row(table, video, image);
  for (const auto& keypoint : keypoints_) {
    std::optional<Point> point;
    if (row) {
      const auto& at = columns.at(keypoint);
      const double x = table.at(*row, at.x), y = table.at(*row, at.y);
      if (std::isfinite(x) && std::isfinite(y)) point = Point{x, y};
    }
    frame.points.push_back(point);
  }
  if (const auto machine = machine_labels(folder)) {
    std::map<Keypoint, projects::KeypointColumns> machine_columns;
    for (auto& at : projects::keypoint_columns(*machine, "machinelabels"))
      machine_columns.emplace(Keypoint{at.individual, at.bodypart}, at);
    const auto machine_row = find_row(*machine, video, image);
    for (const auto& keypoint : keypoints_) {
      std::optional<MachinePoint> point;
      const auto it = machine_columns.find(keypoint);
      if (machine_row && it != machine_columns.end()) {
        const auto& at = it->second;
        const double x = machine->at(*machine_row, at.x), y = machine->at(*machine_row, at.y);
        const double likelihood = at.likelihood ? machine->at(*machine_row, *at.likelihood) : 1.0;
        if (std::isfinite(x) && std::isfinite(y)) point = MachinePoint{x, y, likelihood};
      }
      frame.machine.push_back(point);
    }
  }
  if (const auto size = projects::read_image_size(folder / image)) {
    frame.width = size->width;
    frame.height = size->height;
  }
  return frame;
}

std::vector<VideoSummary> LabelStore::videos() const {
  std::lock_guard lock(mutex_);
  std::vector<VideoSummary> videos;
  for (const auto& folder : labeled_folders()) {
    VideoSummary video;
    video.stem = folder.filename().string();
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(folder, error)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file(error) && is_plain_name(name) && is_image_name(name))
        video.frames.push_back({name, 0, false});
    }
    std::sort(video.frames.begin(), video.frames.end(),
              [](const FrameSummary& a, const FrameSummary& b) { return a.image < b.image; });
    Table table;
    try {
      table = load(folder).table;
    } catch (const RequestError& failure) {
      // One folder's unreadable labels must not hide the others: the page shows why.
      video.problem = failure.what();
      videos.push_back(std::move(video));
      continue;
    }
    const auto keypoints = keypoint_columns_by_name(table);
    const auto machine = machine_labels(folder);
    for (auto& frame : video.frames) {
      if (const auto row = find_row(table, video.stem, frame.image)) {
        for (const auto& keypoint : keypoints_) {
          const auto& columns = keypoints.at(keypoint);
          if (std::isfinite(table.at(*row, columns.x)) && std::isfinite(table.at(*row, columns.y)))
            ++frame.labeled;
        }
      }
      frame.machine = machine && find_row(*machine, video.stem, frame.image).has_value();
    }
    videos.push_back(std::move(video));
  }
  return videos;
}

FrameLabels LabelStore::frame(std::string_view video, std::string_view image) const {
  const fs::path path = image_path(video, image);
  std::lock_guard lock(mutex_);
  return frame_locked(path.parent_path(), video, image, load(path.parent_path()).table);
}

FrameLabels LabelStore::set_point(std::string_view video, std::string_view image,
                                  const Keypoint& keypoint, double x, double y) {
  const fs::path path = image_path(video, image);
  check_keypoint(keypoint);
  if (!std::isfinite(x) || !std::isfinite(y))
    throw RequestError(400, "a point needs finite x and y");
  if (const auto size = projects::read_image_size(path)) {
    if (x < 0 || y < 0 || x >= size->width || y >= size->height) {
      throw RequestError(
          400, fmt::format("({}, {}) is outside the {}x{} image", x, y, size->width, size->height));
    }
  }
  // Hundredths of a pixel: finer than any click, and short in the CSV.
  x = std::round(x * 100.0) / 100.0;
  y = std::round(y * 100.0) / 100.0;
  std::lock_guard lock(mutex_);
  const fs::path folder = path.parent_path();
  const LoadedLabels loaded = load(folder);
  Table table = loaded.table;
  const auto columns = keypoint_columns_by_name(table).at(keypoint);
  const auto found = find_row(table, video, image);
  const std::size_t row = found ? *found : insert_row(table, video, image);
  table.at(row, columns.x) = x;
  table.at(row, columns.y) = y;
  save(loaded, table);
  return frame_locked(folder, video, image, table);
}

FrameLabels LabelStore::delete_point(std::string_view video, std::string_view image,
                                     const Keypoint& keypoint) {
  const fs::path path = image_path(video, image);
  check_keypoint(keypoint);
  std::lock_guard lock(mutex_);
  const fs::path folder = path.parent_path();
  const LoadedLabels loaded = load(folder);
  Table table = loaded.table;
  const auto columns = keypoint_columns_by_name(table).at(keypoint);
  if (const auto row = find_row(table, video, image)) {
    if (!std::isnan(table.at(*row, columns.x)) || !std::isnan(table.at(*row, columns.y))) {
      table.at(*row, columns.x) = kNaN;
      table.at(*row, columns.y) = kNaN;
      save(loaded, table);
    }
  }
  return frame_locked(folder, video, image, table);
}

FrameLabels LabelStore::move_to_individual(std::string_view video, std::string_view image,
                                           const Keypoint& keypoint,
                                           std::string_view to_individual) {
  const fs::path path = image_path(video, image);
  check_keypoint(keypoint);
  const Keypoint target{std::string(to_individual), keypoint.bodypart};
  if (target == keypoint) {
    throw RequestError(
        400, fmt::format("the point already belongs to {}", printable(keypoint.individual, 80)));
  }
  check_keypoint(target);
  std::lock_guard lock(mutex_);
  const fs::path folder = path.parent_path();
  const LoadedLabels loaded = load(folder);
  Table table = loaded.table;
  const auto columns = keypoint_columns_by_name(table);
  const auto& from = columns.at(keypoint);
  const auto& into = columns.at(target);
  const auto row = find_row(table, video, image);
  const auto has_point = [&](const projects::KeypointColumns& at) {
    return row && std::isfinite(table.at(*row, at.x)) && std::isfinite(table.at(*row, at.y));
  };
  if (!has_point(from)) {
    throw RequestError(409, fmt::format("{} has no point in {} to move (deleted meanwhile?)",
                                        printable(describe(keypoint), 160), image));
  }
  if (has_point(into)) {
    throw RequestError(
        409,
        fmt::format("{} already has a point in {} (at {:g}, {:g}); nothing was moved",
                    printable(describe(target), 160), image, table.at(*row, into.x),
                    table.at(*row, into.y)),
        "move or delete that point first");
  }
  table.at(*row, into.x) = table.at(*row, from.x);
  table.at(*row, into.y) = table.at(*row, from.y);
  table.at(*row, from.x) = kNaN;
  table.at(*row, from.y) = kNaN;
  save(loaded, table);
  return frame_locked(folder, video, image, table);
}

FrameLabels LabelStore::accept_machine(std::string_view video, std::string_view image) {
  const fs::path path = image_path(video, image);
  std::lock_guard lock(mutex_);
  const fs::path folder = path.parent_path();
  const LoadedLabels loaded = load(folder);
  Table table = loaded.table;
  FrameLabels frame = frame_locked(folder, video, image, table);
  const auto keypoints = keypoint_columns_by_name(table);
  std::optional<std::size_t> row = find_row(table, video, image);
  bool changed = false;
  for (std::size_t j = 0; j < keypoints_.size() && j < frame.machine.size(); ++j) {
    if (frame.points[j] || !frame.machine[j]) continue;
    if (!row) row = insert_row(table, video, image);
    const auto& columns = keypoints.at(keypoints_[j]);
    table.at(*row, columns.x) = frame.machine[j]->x;
    table.at(*row, columns.y) = frame.machine[j]->y;
    changed = true;
  }
  if (!changed) return frame;
  save(loaded, table);
  return frame_locked(folder, video, image, table);
}

std::vector<MergeNote> LabelStore::merge_other_scorers() {
  std::vector<MergeNote> notes;
  std::lock_guard lock(mutex_);
  const std::string& scorer = config_.values().scorer;
  for (const auto& folder : labeled_folders()) {
    const fs::path record = folder / ".labpose-backups" / "merged.txt";
    std::string merged_before;
    std::error_code error;
    if (fs::exists(record, error)) merged_before = read_file(record);
    std::string merged_now;
    for (const auto& other : projects::label_scorers(folder)) {
      if (other == scorer) continue;
      projects::LoadedLabels loaded;
      try {
        loaded = projects::read_labels(projects::label_files(folder, other));
      } catch (const Error& failure) {
        console::warn("{}: cannot read the labels of scorer {}: {}", folder.string(), other,
                      failure.what());
        continue;
      }
      const std::string version = file_version(loaded.source);
      if (merged_before.find(version + "\n") != std::string::npos) continue;
      LoadedLabels ours;
      try {
        ours = load(folder);
      } catch (const RequestError& failure) {
        console::warn("{}: not merging the labels of scorer {}: {}", folder.string(), other,
                      failure.what());
        continue;
      }
      Table table = ours.table;
      std::size_t added = 0;
      try {
        added = merge_points(table, loaded.table);
      } catch (const Error& failure) {
        console::warn("{}: not merging {}: {}", folder.string(), loaded.source.filename().string(),
                      failure.what());
        continue;
      }
      if (added > 0) save(ours, table);
      notes.push_back({folder.filename().string(), loaded.source.filename().string(), added});
      merged_now += version + "\n";
    }
    if (!merged_now.empty()) {
      fs::create_directories(record.parent_path(), error);
      write_file_atomically(record, merged_before + merged_now);
    }
  }
  return notes;
}

}  // namespace labpose::labeling
