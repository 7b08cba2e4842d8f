// The tracking and stitching steps on a video's files, and labpose track/stitch over videos.
#include "pipeline/analysis/multi_animal_tracking.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/analysis_metadata.hpp"
#include "pipeline/analysis/track_refinement.hpp"
#include "pipeline/analysis/tracklet_files.hpp"
#include "pipeline/assembly/identity.hpp"
#include "pipeline/tracking/identity_reliability.hpp"
#include "pipeline/tracking/link.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// The tracks; empty (NaN) tracks, with a warning, when no tracklet is long enough. The caller has
// checked the settings: one out of range is the user's error, not the data's.
Tracks stitched_tracks(const Tracklets& tracklets, const StitchSettings& settings,
                       const MultiAnimalFiles& files, const std::string& video_name) {
  try {
    return stitch_tracklets(tracklets, settings);
  } catch (const Error& error) {
    console::warn("{}: {} ({}); its tracks are left empty (NaN); the tracklets are in {}",
                  video_name, error.what(), error.hint(),
                  files.tracklets_pickle.filename().string());
    Tracks empty;
    empty.tracks.resize(static_cast<std::size_t>(settings.n_tracks));
    empty.single = tracklets.single;
    return empty;
  }
}

// The identity votes of a frame's animals (identity_votes) when any of them has keypoints with an
// identity; none otherwise.
std::vector<std::vector<double>> frame_votes(const Assemblies& frame, int individuals, int index) {
  std::vector<std::vector<double>> votes;
  bool any = false;
  for (const Assembly& animal : frame.animals) {
    try {
      votes.push_back(identity_votes(animal, individuals));
    } catch (const Error& error) {
      throw Error(fmt::format("frame {}: {}", index, error.what()), error.hint());
    }
    if (votes.back().empty())
      votes.back().assign(static_cast<std::size_t>(individuals), 0.0);
    else
      any = true;
  }
  if (!any) votes.clear();
  return votes;
}

// The weight of identity votes in linking: how often they agree with tracklets that the same
// tracker links by motion alone. Without votes, or with the box tracker (which ignores them), the
// settings as they are.
TrackerSettings weigh_identity_votes(const std::vector<FrameAnimals>& frames,
                                     TrackerSettings settings, int individuals,
                                     const fs::path& file) {
  const bool voted = std::any_of(frames.begin(), frames.end(), [](const FrameAnimals& frame) {
    return !frame.identity_votes.empty();
  });
  if (!voted || settings.method != TrackMethod::ellipse) return settings;
  TrackerSettings by_motion = settings;
  by_motion.identity_weight = 0.0;
  const auto reliability = identity_reliability(link_tracklets(frames, by_motion), individuals);
  if (!reliability) return settings;
  settings.identity_weight = reliability->weight;
  console::info(
      "{}: the identity votes agree with their tracklet in {:.0f} % of {} frames ({:.0f} % by "
      "chance), so they weigh {:.2f} (1: votes that always agree)",
      file.filename().string(), 100.0 * reliability->agreement, reliability->frames,
      100.0 * reliability->chance, settings.identity_weight);
  return settings;
}

// What both steps share for one video: the model's names and settings, the files, the frames.
struct StepVideo {
  AnimalFileHeader header;
  MultiAnimalFiles files;
};

AnimalAnalysisModel step_model(const projects::ProjectConfig& config,
                               const TrackStepOptions& options, const char* command) {
  if (!config.values().multi_animal) {
    throw UsageError(fmt::format("labpose {} is for multi-animal projects, and {} is a "
                                 "single-animal one",
                                 command, config.file().string()),
                     "a single-animal analysis has one animal per frame and needs no tracking: "
                     "labpose analyze writes its tracks");
  }
  if (options.analyze.dest) create_folder(*options.analyze.dest);
  return find_animal_analysis_model(config, options.analyze, options.tracker);
}

StepVideo step_video(const AnimalAnalysisModel& model, const TrackStepOptions& options,
                     const fs::path& video) {
  const fs::path folder = options.analyze.dest ? *options.analyze.dest : video.parent_path();
  const std::string stem = projects::video_stem(video.string());
  // The count the analysis recorded, so that the video's packets are not read again; reading
  // them is left for files made elsewhere (DeepLabCut's) or of another copy of the video.
  const std::optional<std::int64_t> analyzed =
      analyzed_frame_count(analysis_files(folder, stem, model.model.scorer), video);
  const std::int64_t frames = analyzed ? *analyzed : VideoReader(video).frame_count();
  return {animal_file_header(model, frames),
          multi_animal_files(folder, stem, model.model.scorer, options.tracker)};
}

bool skip(const fs::path& output, const TrackStepOptions& options, const fs::path& video) {
  std::error_code error;
  if (options.analyze.overwrite || !fs::exists(output, error)) return false;
  console::info("{}: {} exists; --overwrite makes it again", video.filename().string(),
                output.filename().string());
  return true;
}

}  // namespace

AnimalFileHeader animal_file_header(const AnimalAnalysisModel& model, std::int64_t frames) {
  AnimalFileHeader header;
  header.scorer = model.model.scorer;
  header.individuals = model.individuals;
  header.multi_bodyparts = model.multi_bodyparts;
  header.unique_bodyparts = model.unique_bodyparts;
  header.graph = model.animals.graph;
  header.edges = model.edges;
  header.candidates = model.assembly.candidates;
  header.frames = frames;
  header.identity_channels = model.animals.identity_channels;
  return header;
}

Tracklets track_assemblies(const std::vector<Assemblies>& assembled,
                           const TrackerSettings& settings, const AnimalFileHeader& header,
                           const fs::path& file) {
  std::vector<FrameAnimals> frames(assembled.size());
  const auto individuals = static_cast<int>(header.individuals.size());
  for (std::size_t i = 0; i < assembled.size(); ++i) {
    frames[i].assemblies = assembled[i];
    frames[i].identity_votes = frame_votes(assembled[i], individuals, static_cast<int>(i));
  }
  Tracklets tracklets =
      link_tracklets(frames, weigh_identity_votes(frames, settings, individuals, file));
  write_tracklets_pickle(file, tracklets, header);
  return tracklets;
}

void stitch_into_tracks(const Tracklets& tracklets, const StitchSettings& settings,
                        const AnimalFileHeader& header, const MultiAnimalFiles& files, bool csv,
                        const std::string& video_name) {
  StitchSettings weighed = settings;
  if (const auto reliability = identity_reliability(tracklets, header.identity_channels))
    weighed.identity_weight = reliability->weight;
  const projects::Table table =
      tracks_table(stitched_tracks(tracklets, weighed, files, video_name), header);
  projects::write_table_hdf5(table, files.tracks_h5, "tracks");
  if (csv) projects::write_table_csv(table, files.tracks_csv);
  // refine-tracks' backups were of the tracks just replaced.
  for (const fs::path& stale : forget_original_tracks({files.tracks_h5, files.tracks_csv}))
    console::info("removed {}: it held the tracks before this stitching", stale.string());
}

std::vector<TrackStepResult> track_videos(const projects::ProjectConfig& config,
                                          const std::vector<fs::path>& videos,
                                          const TrackStepOptions& options) {
  const AnimalAnalysisModel model = step_model(config, options, "track");
  std::vector<TrackStepResult> results;
  for (const fs::path& video : videos) {
    const StepVideo step = step_video(model, options, video);
    TrackStepResult& result = results.emplace_back();
    result.video = video;
    result.output = step.files.tracklets_pickle;
    result.skipped = skip(result.output, options, video);
    if (result.skipped) continue;
    const auto assembled = read_assemblies_pickle(step.files.assemblies_pickle, step.header.frames,
                                                  static_cast<int>(model.multi_bodyparts.size()),
                                                  static_cast<int>(model.unique_bodyparts.size()));
    const Tracklets tracklets =
        track_assemblies(assembled, model.tracker, step.header, result.output);
    console::info("{}: {} tracklets", video.filename().string(), tracklets.by_id.size());
  }
  return results;
}

std::vector<TrackStepResult> stitch_videos(const projects::ProjectConfig& config,
                                           const std::vector<fs::path>& videos,
                                           const TrackStepOptions& options) {
  const AnimalAnalysisModel model = step_model(config, options, "stitch");
  StitchSettings settings = model.stitch;
  settings.n_tracks = options.n_tracks.value_or(settings.n_tracks);
  settings.min_length = options.min_length.value_or(settings.min_length);
  settings.max_gap = options.max_gap.value_or(settings.max_gap);
  check_stitch_settings(settings);
  std::vector<TrackStepResult> results;
  for (const fs::path& video : videos) {
    StepVideo step = step_video(model, options, video);
    TrackStepResult& result = results.emplace_back();
    result.video = video;
    result.output = step.files.tracks_h5;
    result.skipped = skip(result.output, options, video);
    if (result.skipped) continue;
    const Tracklets tracklets = read_tracklets_pickle(
        step.files.tracklets_pickle, static_cast<int>(model.multi_bodyparts.size()),
        static_cast<int>(model.unique_bodyparts.size()));
    // More tracks than individuals: DeepLabCut names the extra ones ind<k>.
    for (int t = static_cast<int>(step.header.individuals.size()); t < settings.n_tracks; ++t)
      step.header.individuals.push_back(fmt::format("ind{}", t + 1));
    stitch_into_tracks(tracklets, settings, step.header, step.files, options.analyze.csv,
                       video.filename().string());
  }
  return results;
}

}  // namespace labpose::pipeline
