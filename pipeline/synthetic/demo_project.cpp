// The demo project: render the video, create the project around it, set its bodyparts (and
// individuals), extract frames with the same code as `labpose extract-frames`, label them from the
// ground truth with the project layer's label tables.
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

constexpr const char* kScorer = "labpose";

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

bool several(const DemoProjectOptions& options) {
  return options.animals > 1;
}

// The task (so the project folder) and the video's name.
std::string task_of(const DemoProjectOptions& options) {
  return several(options) ? "demo_mice" : "demo";
}
std::string video_name_of(const DemoProjectOptions& options) {
  return several(options) ? "synthetic_mice.mp4" : "synthetic_mouse.mp4";
}

// The folder the project is made in, absolute; throws unless it exists and holds no project of
// the same name.
fs::path checked_working_dir(const DemoProjectOptions& options) {
  if (options.animals < 1) {
    throw UsageError(
        fmt::format("a demo needs at least one animal (asked for {})", options.animals),
        "leave out --animals for the single mouse, or ask for 2 or more");
  }
  std::error_code error;
  const fs::path dir = fs::absolute(options.dir).lexically_normal();
  if (!fs::is_directory(dir, error)) {
    throw UsageError(fmt::format("the folder {} does not exist", dir.string()),
                     "create it first or choose another --dir");
  }
  const fs::path project =
      dir / projects::project_folder_name(task_of(options), kScorer, projects::today());
  if (fs::exists(project, error)) {
    throw Error(fmt::format("the demo project {} already exists", project.string()),
                fmt::format("remove it (rm -r {}) or make the demo elsewhere with --dir",
                            project.string()));
  }
  return dir;
}

// Renders the video to `file` and keeps its ground truth in `demo`.
void render_video(const DemoProjectOptions& options, const fs::path& file, DemoProject& demo) {
  if (!several(options)) {
    demo.truth = write_synthetic_video(file, options.video);
    return;
  }
  SyntheticMiceOptions mice;
  mice.video = options.video;
  mice.animals = options.animals;
  mice.distinct_shades = options.distinct_shades;
  demo.mice_truth = write_synthetic_mice_video(file, mice);
}

// The keypoints (per animal when several), the skeleton and the frames to pick.
void describe_keypoints(const DemoProjectOptions& options, projects::ProjectConfig& config) {
  if (several(options)) {
    config.set_multi_animal_bodyparts(synthetic_bodyparts(), {});
    if (options.identity) config.set_identity(true);
  } else {
    config.set_bodyparts(synthetic_bodyparts());
  }
  config.set_skeleton({{"snout", "leftear"},
                       {"snout", "rightear"},
                       {"leftear", "tailbase"},
                       {"rightear", "tailbase"}});
  config.set_numframes2pick(options.labeled_frames);
  config.save();
}

// Copies the visible keypoints of `points` into `row` of `table` at the columns of `columns`
// (the same order); hidden or out-of-frame keypoints stay NaN (unlabeled).
void label_row(projects::Table& table, std::size_t row,
               const std::vector<projects::KeypointColumns>& columns, std::size_t first,
               const std::vector<SyntheticKeypoint>& points) {
  for (std::size_t j = 0; j < points.size(); ++j) {
    if (!points[j].visible) continue;
    table.at(row, columns[first + j].x) = points[j].x;
    table.at(row, columns[first + j].y) = points[j].y;
  }
}

// The labels of the extracted frames, from the ground truth: one animal's columns, or every
// individual's in DeepLabCut's multi-animal layout.
projects::Table ground_truth_labels(const DemoProject& demo, const ExtractedVideo& video,
                                    const projects::ProjectConfig& config) {
  const auto& values = config.values();
  projects::Table table = values.multi_animal
                              ? projects::make_multi_animal_label_table(
                                    kScorer, values.individuals, values.multianimal_bodyparts, {})
                              : projects::make_label_table(kScorer, values.bodyparts);
  const std::vector<projects::KeypointColumns> columns =
      projects::keypoint_columns(table, config.file());
  const std::size_t parts = synthetic_bodyparts().size();
  for (const std::int64_t index : video.frames) {
    const std::size_t row = table.add_row(
        {"labeled-data", video.stem, projects::frame_image_name(index, video.frame_count)});
    const auto frame = static_cast<std::size_t>(index);
    if (!values.multi_animal) {
      label_row(table, row, columns, 0, demo.truth[frame]);
      continue;
    }
    for (std::size_t animal = 0; animal < values.individuals.size(); ++animal) {
      label_row(table, row, columns, animal * parts, demo.mice_truth[frame][animal]);
    }
  }
  return table;
}

}  // namespace

DemoProject create_demo_project(const DemoProjectOptions& options) {
  const fs::path dir = checked_working_dir(options);
  // The video is rendered into a hidden folder beside the project and copied in by
  // create_project, as a user's video would be.
  remove_stale_temps(dir);  // of a demo that was killed while making its project
  const fs::path staging = temp_name_for(dir / "labpose-demo");
  const RemoveTree remove_staging(staging);
  std::error_code error;
  fs::create_directories(staging, error);
  if (error) {
    throw Error(fmt::format("cannot create the folder {}: {}", staging.string(), error.message()),
                "check that you may write to the folder, or choose another --dir");
  }
  DemoProject demo;
  const fs::path rendered = staging / video_name_of(options);
  render_video(options, rendered, demo);

  projects::CreateProjectOptions create;
  create.task = task_of(options);
  create.scorer = kScorer;
  create.videos = {{rendered, options.video.width, options.video.height}};
  create.working_dir = dir;
  create.copy_videos = true;
  create.date = projects::today();
  create.multi_animal = several(options);
  if (create.multi_animal) create.individuals = synthetic_individuals(options.animals);
  demo.config = projects::create_project(create);
  RemoveTree remove_project(demo.config.parent_path());  // until the project is complete
  const projects::ProjectLayout layout(demo.config.parent_path());
  demo.video = layout.videos_dir() / video_name_of(options);

  projects::ProjectConfig config = projects::ProjectConfig::load(demo.config);
  describe_keypoints(options, config);

  ExtractFramesOptions extract;
  extract.selection = FrameSelection::kmeans;
  extract.seed = options.video.seed;
  extract.threads = options.threads;
  const std::vector<ExtractedVideo> extracted = extract_frames(config, extract);
  LABPOSE_ASSERT(extracted.size() == 1);
  const ExtractedVideo& video = extracted.front();
  const std::size_t rendered_frames = several(options) ? demo.mice_truth.size() : demo.truth.size();
  if (video.frame_count != static_cast<std::int64_t>(rendered_frames)) {
    throw Error(fmt::format("the demo video {} has {} frames, but {} were rendered",
                            demo.video.string(), video.frame_count, rendered_frames),
                "this is a bug in labpose; please report it");
  }
  projects::write_labels(ground_truth_labels(demo, video, config),
                         projects::label_files(video.folder, kScorer));
  demo.labeled_frames = video.frames;
  remove_project.release();
  return demo;
}

}  // namespace labpose::pipeline
