// Project creation with a temp folder renamed into place, and add-videos with rollback.
#include "projects/project.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "core/progress.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;
namespace {

constexpr std::uintmax_t kProgressBytes = 64ull << 20;  // show a bar when copying more than this

// Removes a folder tree on scope exit unless released (an unfinished project never stays behind).
class RemoveOnFailure {
 public:
  explicit RemoveOnFailure(fs::path path) : path_(std::move(path)) {}
  ~RemoveOnFailure() {
    if (!path_.empty()) {
      std::error_code ignored;
      fs::remove_all(path_, ignored);
    }
  }
  RemoveOnFailure(const RemoveOnFailure&) = delete;
  RemoveOnFailure& operator=(const RemoveOnFailure&) = delete;
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

Error filesystem_error(const std::string& action, const fs::path& path,
                       const std::error_code& error) {
  return Error(
      fmt::format("cannot {} {}: {}", action, path.string(), describe_errno(error.value(), path)),
      error.value() == EACCES || error.value() == EPERM
          ? "check the folder's permissions, or choose another folder with --dir"
          : std::string());
}

void make_folder(const fs::path& path) {
  std::error_code error;
  fs::create_directories(path, error);
  if (error) throw filesystem_error("create the folder", path, error);
}

// Copies `source` into `destination` through a temp file, with a progress bar for big videos.
void copy_video(const fs::path& source, const fs::path& destination) {
  AtomicFile target(destination);
  const int in = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    throw Error(fmt::format("cannot read video {}: {}", source.string(), describe_errno(errno)));
  const int out = ::open(target.temp_path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (out < 0) {
    const int saved = errno;
    ::close(in);
    throw Error(fmt::format("cannot write {}: {}", destination.string(),
                            describe_errno(saved, destination)));
  }
  std::error_code ignored;
  const auto size = fs::file_size(source, ignored);
  std::optional<Progress> progress;
  if (size > kProgressBytes) {
    progress.emplace("copying " + source.filename().string(), static_cast<std::int64_t>(size >> 20),
                     "MiB");
  }
  std::vector<char> buffer(4 << 20);
  std::uintmax_t copied = 0;
  int failure = 0;
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      failure = errno;
      break;
    }
    if (n == 0) break;
    for (ssize_t written = 0; written < n;) {
      const ssize_t w =
          ::write(out, buffer.data() + written, static_cast<std::size_t>(n - written));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        failure = errno;
        break;
      }
      written += w;
    }
    if (failure != 0) break;
    copied += static_cast<std::uintmax_t>(n);
    if (progress) progress->set_done(static_cast<std::int64_t>(copied >> 20));
  }
  ::close(in);
  if (::close(out) != 0 && failure == 0) failure = errno;
  if (failure != 0) {
    throw Error(fmt::format("cannot copy {} to {}: {}", source.string(), destination.string(),
                            describe_errno(failure, destination)),
                failure == ENOSPC
                    ? "free some disk space, or leave out --copy-videos to link the videos instead"
                    : std::string());
  }
  target.commit();
}

// A symlink to the absolute source path, made under a temp name and renamed into place.
void link_video(const fs::path& source, const fs::path& destination) {
  remove_stale_temps(destination.parent_path());
  const fs::path temp = temp_name_for(destination);
  std::error_code error;
  fs::create_symlink(fs::absolute(source), temp, error);
  if (error) {
    throw Error(fmt::format("cannot link {} into {}: {}", source.string(),
                            destination.parent_path().string(), describe_errno(error.value())),
                "the file system may not support symbolic links; use --copy-videos");
  }
  fs::rename(temp, destination, error);
  if (error) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw filesystem_error("create", destination, error);
  }
}

void place_video(const VideoInput& video, const fs::path& destination, bool copy) {
  if (copy) {
    copy_video(video.path, destination);
  } else {
    link_video(video.path, destination);
  }
}

void check_inputs(const std::vector<VideoInput>& videos) {
  std::map<std::string, fs::path> stems;
  for (const auto& video : videos) {
    const std::string stem = video.path.stem().string();
    const auto [it, inserted] = stems.emplace(stem, video.path);
    if (!inserted) {
      throw UsageError(
          fmt::format("two videos have the same name \"{}\": {} and {}",
                      printable(video.path.filename().string()), printable(it->second.string()),
                      printable(video.path.string())),
          "labeled-data folders are named after the video file; rename one of them first");
    }
    if (video.width <= 0 || video.height <= 0) {
      throw Error(fmt::format("video {} reports no frame size", printable(video.path.string())));
    }
  }
}

}  // namespace

void check_name(const std::string& what, const std::string& name) {
  const auto fail = [&](const std::string& why) {
    throw UsageError(fmt::format("the {} \"{}\" {}", what, printable(name, 80), why),
                     "it becomes part of folder and file names; use letters, digits, '_' or '-'");
  };
  if (name.empty()) fail("is empty");
  if (name.find_first_of("/\\") != std::string::npos) fail("contains '/' or '\\'");
  if (name.front() == '.' || name.front() == '-') fail("starts with '.' or '-'");
  if (name.front() == ' ' || name.back() == ' ') fail("starts or ends with a space");
  if (std::any_of(name.begin(), name.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
    fail("contains control characters");
  }
}

void check_individuals(const std::vector<std::string>& individuals) {
  std::set<std::string> seen;
  for (const std::string& name : individuals) {
    check_name("individual name", name);
    if (name == kUniqueIndividual) {
      throw UsageError("\"single\" cannot name an individual",
                       "DeepLabCut keeps that name for the unique bodyparts: choose another");
    }
    if (!seen.insert(name).second) {
      throw UsageError(fmt::format("the individual \"{}\" is named twice", name),
                       "give every animal its own name");
    }
  }
}

fs::path create_project(const CreateProjectOptions& options) {
  check_name("task name", options.task);
  check_name("scorer name", options.scorer);
  if (!options.individuals.empty() && !options.multi_animal) {
    throw UsageError("individuals are given for a single-animal project",
                     "add --multi-animal, or leave out --individuals");
  }
  check_individuals(options.individuals);
  if (options.videos.empty()) {
    throw UsageError("no videos given",
                     "pass at least one video file or a folder that holds videos");
  }
  check_inputs(options.videos);
  std::error_code error;
  const fs::path working = fs::absolute(options.working_dir).lexically_normal();
  if (!fs::is_directory(working, error)) {
    throw UsageError(fmt::format("the folder {} does not exist", working.string()),
                     "create it first or fix --dir");
  }
  const std::string name = project_folder_name(options.task, options.scorer, options.date);
  const fs::path project = working / name;
  if (fs::exists(project, error)) {
    throw Error(fmt::format("the project folder {} already exists", project.string()),
                fmt::format("to add videos to it: labpose add-videos {} <video>...",
                            (project / "config.yaml").string()));
  }

  // Build everything in a hidden temp folder, then rename it into place in one step. Temp folders
  // of a create that was killed (copied videos can be large) go first.
  remove_stale_temps(working);
  const fs::path temp = temp_name_for(project);
  RemoveOnFailure cleanup(temp);
  make_folder(temp);
  const ProjectLayout staging(temp), final_layout(project);
  for (const fs::path& folder : {staging.videos_dir(), staging.labeled_data_dir(),
                                 staging.training_datasets_dir(), staging.dlc_models_dir()}) {
    make_folder(folder);
  }
  NewProjectSettings settings;
  settings.task = options.task;
  settings.scorer = options.scorer;
  settings.date = config_date(options.date);
  settings.project_dir = project;
  settings.multi_animal = options.multi_animal;
  settings.individuals = options.individuals;
  for (const auto& video : options.videos) {
    const std::string file_name = video.path.filename().string();
    place_video(video, staging.videos_dir() / file_name, options.copy_videos);
    make_folder(staging.labeled_data_folder(video.path.stem().string()));
    settings.video_sets.push_back({(final_layout.videos_dir() / file_name).string(),
                                   CropBox{0, video.width, 0, video.height}});
  }
  const ProjectConfig config = ProjectConfig::new_project(settings, final_layout.config_file());
  write_file_atomically(staging.config_file(), config.to_yaml());

  fs::rename(temp, project, error);
  if (error) throw filesystem_error("create the project folder", project, error);
  cleanup.release();
  return final_layout.config_file();
}

AddVideosResult add_videos(ProjectConfig& config, const std::vector<VideoInput>& videos,
                           bool copy_videos) {
  if (videos.empty())
    throw UsageError("no videos given", "pass at least one video file or a folder of videos");
  check_inputs(videos);
  const ProjectLayout layout(config.project_dir());
  std::set<std::string> existing_stems;
  for (const auto& video : config.values().video_sets) existing_stems.insert(video_stem(video.key));

  AddVideosResult result;
  std::vector<const VideoInput*> to_add;
  for (const auto& video : videos) {
    const std::string stem = video.path.stem().string();
    if (existing_stems.count(stem) != 0) {
      result.skipped.push_back(stem);
      continue;
    }
    const fs::path destination = layout.videos_dir() / video.path.filename();
    std::error_code error;
    if (fs::exists(fs::symlink_status(destination, error)) &&
        !fs::equivalent(destination, video.path, error)) {
      throw Error(fmt::format("{} already exists and is a different file than {}",
                              destination.string(), video.path.string()),
                  "rename your video, or remove the old file from videos/ if it is not needed");
    }
    to_add.push_back(&video);
  }

  // Place files first; on failure remove what this call created so the project is unchanged.
  std::vector<fs::path> created;
  try {
    std::error_code error;
    if (!fs::is_directory(layout.videos_dir(), error)) {
      make_folder(layout.videos_dir());
      created.push_back(layout.videos_dir());
    }
    for (const VideoInput* video : to_add) {
      const fs::path destination = layout.videos_dir() / video->path.filename();
      if (!fs::exists(fs::symlink_status(destination, error))) {
        place_video(*video, destination, copy_videos);
        created.push_back(destination);
      }
      const fs::path folder = layout.labeled_data_folder(video->path.stem().string());
      if (!fs::exists(folder, error)) {
        make_folder(folder);
        created.push_back(folder);
      }
      config.add_video_set({destination.string(), CropBox{0, video->width, 0, video->height}});
      result.added.push_back(video->path.stem().string());
    }
    if (!result.added.empty()) config.save();
  } catch (...) {
    for (auto it = created.rbegin(); it != created.rend(); ++it) {
      std::error_code ignored;
      fs::remove(*it, ignored);
    }
    throw;
  }
  return result;
}

std::optional<fs::path> resolve_video(const ProjectConfig& config, const std::string& key) {
  std::error_code error;
  if (fs::is_regular_file(key, error)) return fs::path(key);
  const fs::path local = ProjectLayout(config.project_dir()).videos_dir() / portable_file_name(key);
  if (fs::is_regular_file(local, error)) return local;
  return std::nullopt;
}

}  // namespace labpose::projects
