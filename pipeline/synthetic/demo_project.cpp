// The demo project: render the video, create the project around it, set its bodyparts, extract
// frames with the same code as `labpose extract-frames`, label them from the ground truth.
#include "pipeline/synthetic/demo_project.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/frames/extract.hpp"
#include "projects/config.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"
#include "projects/project.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

constexpr const char* kTask = "demo";
constexpr const char* kScorer = "labpose";
constexpr const char* kVideoName = "synthetic_mouse.mp4";

// Removes a folder tree at scope exit unless released.
class RemoveTree {
 public:
  explicit RemoveTree(fs::path path) : path_(std::move(path)) {}
  ~RemoveTree() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  RemoveTree(const RemoveTree&) = delete;
  RemoveTree& operator=(const RemoveTree&) = delete;
  void release() { path_.clear(); }

 private:
  fs::path path_;
};

}  // namespace

DemoProject create_demo_project(const DemoProjectOptions& options) {
  std::error_code error;
  const fs::path dir = fs::absolute(options.dir).lexically_normal();
  if (!fs::is_directory(dir, error)) {
    throw UsageError(fmt::format("the folder {} does not exist", dir.string()),
                     "create it first or choose another --dir");
  }
  const fs::path project = dir / projects::project_folder_name(kTask, kScorer, projects::today());
  if (fs::exists(project, error)) {
    throw Error(fmt::format("the demo project {} already exists", project.string()),
                fmt::format("remove it (rm -r {}) or make the demo elsewhere with --dir",
                            project.string()));
  }

  // The video is rendered into a hidden folder beside the project and copied in by
  // create_project, as a user's video would be.
  remove_stale_temps(dir);  // of a demo that was killed while making its project
  const fs::path staging = temp_name_for(dir / "labpose-demo");
  const RemoveTree remove_staging(staging);
  fs::create_directories(staging, error);
  if (error) {
    throw Error(fmt::format("cannot create the folder {}: {}", staging.string(), error.message()),
                "check that you may write to the folder, or choose another --dir");
  }
  DemoProject demo;
  const fs::path rendered = staging / kVideoName;
  demo.truth = write_synthetic_video(rendered, options.video);

  projects::CreateProjectOptions create;
  create.task = kTask;
  create.scorer = kScorer;
  create.videos = {{rendered, options.video.width, options.video.height}};
  create.working_dir = dir;
  create.copy_videos = true;
  create.date = projects::today();
  demo.config = projects::create_project(create);
  RemoveTree remove_project(demo.config.parent_path());  // until the project is complete
  const projects::ProjectLayout layout(demo.config.parent_path());
  demo.video = layout.videos_dir() / kVideoName;

  projects::ProjectConfig config = projects::ProjectConfig::load(demo.config);
  const std::vector<std::string>& bodyparts = synthetic_bodyparts();
  config.set_bodyparts(bodyparts);
  config.set_skeleton({{"snout", "leftear"},
                       {"snout", "rightear"},
                       {"leftear", "tailbase"},
                       {"rightear", "tailbase"}});
  config.set_numframes2pick(options.labeled_frames);
  config.save();

  ExtractFramesOptions extract;
  extract.selection = FrameSelection::kmeans;
  extract.seed = options.video.seed;
  extract.threads = options.threads;
  const std::vector<ExtractedVideo> extracted = extract_frames(config, extract);
  LABPOSE_ASSERT(extracted.size() == 1);
  const ExtractedVideo& video = extracted.front();
  if (video.frame_count != static_cast<std::int64_t>(demo.truth.size())) {
    throw Error(fmt::format("the demo video {} has {} frames, but {} were rendered",
                            demo.video.string(), video.frame_count, demo.truth.size()),
                "this is a bug in labpose; please report it");
  }

  // Labels from the ground truth; hidden or out-of-frame keypoints stay NaN (unlabeled).
  projects::Table table = projects::make_label_table(kScorer, bodyparts);
  for (const std::int64_t index : video.frames) {
    const std::size_t row = table.add_row(
        {"labeled-data", video.stem, projects::frame_image_name(index, video.frame_count)});
    const auto& points = demo.truth[static_cast<std::size_t>(index)];
    for (std::size_t j = 0; j < points.size(); ++j) {
      if (!points[j].visible) continue;
      table.at(row, 2 * j) = points[j].x;
      table.at(row, 2 * j + 1) = points[j].y;
    }
  }
  projects::write_labels(table, projects::label_files(video.folder, kScorer));
  demo.labeled_frames = video.frames;
  remove_project.release();
  return demo;
}

}  // namespace labpose::pipeline
