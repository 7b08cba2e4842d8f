// --shuffle, --training-fraction and --snapshot for the commands that work with a trained model.
#include "tools/labpose/model_options.hpp"

#include <fmt/core.h>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/multi_animal_files.hpp"
#include "projects/layout.hpp"
#include "projects/promoted_model.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::tools {

void ModelOptions::add_to(CLI::App& app, const std::string& purpose) {
  app.add_option(
         "--shuffle", shuffle,
         "the shuffle " + purpose + " (default: the model labpose sweep --promote chose, else 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--training-fraction", training_fraction,
                 "the training fraction (default: the first TrainingFraction)")
      ->check(CLI::Range(0.01, 1.0));
  app.add_option(
      "--snapshot", snapshot,
      "an index as snapshotindex (-1 = the last, the best one when there is one) or best "
      "(default: config.yaml's snapshotindex)");
}

std::pair<std::optional<int>, bool> ModelOptions::snapshot_choice() const {
  if (snapshot.empty()) return {std::nullopt, false};
  if (snapshot == "best") return {std::nullopt, true};
  if (const auto index = projects::yaml_text::parse_int(snapshot))
    return {static_cast<int>(*index), false};
  throw UsageError(fmt::format("--snapshot {} is not a snapshot index or best", snapshot),
                   "-1 is the last snapshot (the best one when there is one), 0 the first");
}

std::pair<int, std::optional<double>> ModelOptions::chosen_shuffle(
    const projects::ProjectConfig& config) const {
  return projects::default_model_shuffle(config, shuffle, training_fraction);
}

void ModelOptions::refuse_with_exported_model() const {
  if (shuffle || training_fraction || !snapshot.empty()) {
    throw UsageError("--model names an exported folder, which holds one snapshot",
                     "leave out --shuffle, --training-fraction and --snapshot with --model");
  }
}

pipeline::AnalysisModel ModelOptions::find(const projects::ProjectConfig& config) const {
  const auto [index, best] = snapshot_choice();
  const auto [chosen, fraction] = chosen_shuffle(config);
  return pipeline::find_analysis_model(config, chosen, fraction, index, best);
}

pipeline::TrackMethod parse_tracker(const std::string& text, const std::string& where) {
  if (text.empty() || text == "ellipse") return pipeline::TrackMethod::ellipse;
  if (text == "box") return pipeline::TrackMethod::box;
  if (text == "identity") return pipeline::TrackMethod::identity;
  throw UsageError(fmt::format("{} {} is not a tracker labpose has", where, text),
                   "use ellipse (DeepLabCut's _el files, the default), box (_bx) or, for a "
                   "network trained with identity: true, identity (_id); labpose has no skeleton "
                   "tracker");
}

std::string tracker_name(pipeline::TrackMethod tracker) {
  switch (tracker) {
    case pipeline::TrackMethod::box:
      return "box";
    case pipeline::TrackMethod::identity:
      return "identity";
    case pipeline::TrackMethod::ellipse:
      break;
  }
  return "ellipse";
}

void ModelOptions::add_track_method_to(CLI::App& app) {
  app.add_option("--track-method,--tracker", track_method,
                 "multi-animal projects: whose stitched tracks, ellipse (_el), box (_bx) or "
                 "identity (_id) (default: config.yaml's default_track_method, else ellipse)");
}

TrackedModel ModelOptions::find_tracked(const projects::ProjectConfig& config) const {
  if (!config.values().multi_animal) {
    if (!track_method.empty()) {
      throw UsageError("--track-method is for multi-animal projects",
                       "a single-animal project's tracks have no tracker: leave it out");
    }
    return {find(config), std::nullopt};
  }
  const bool given = !track_method.empty();
  TrackedModel tracked;
  tracked.tracker =
      given ? parse_tracker(track_method, "--track-method")
            : parse_tracker(config.values().default_track_method,
                            config.place("default_track_method") + ": default_track_method");
  const auto [index, best] = snapshot_choice();
  const auto [chosen, fraction] = chosen_shuffle(config);
  tracked.model = pipeline::find_shuffle_model(config, chosen, fraction, index, best);
  return tracked;
}

void for_each_tracked_video(const TrackedModel& model, const std::vector<std::string>& videos,
                            const std::string& dest, bool filtered, const std::string& what,
                            const std::function<void(const TrackedVideo&)>& use) {
  const std::vector<std::filesystem::path> inputs(videos.begin(), videos.end());
  int missing = 0;
  for (const auto& video : pipeline::videos_to_analyze(inputs, 0, 1)) {
    TrackedVideo tracked;
    tracked.video = video;
    tracked.folder = dest.empty() ? video.parent_path() : std::filesystem::path(dest);
    const std::string stem = projects::video_stem(video.string());
    tracked.files = pipeline::analysis_files(tracked.folder, stem, model.model.scorer);
    const std::filesystem::path analyzed =
        model.tracker
            ? pipeline::multi_animal_files(tracked.folder, stem, model.model.scorer, *model.tracker)
                  .tracks_h5
            : tracked.files.h5;
    tracked.tracks = filtered ? projects::filtered_tracks_path(analyzed) : analyzed;
    std::error_code error;
    if (!std::filesystem::exists(tracked.tracks, error)) {
      console::warn(
          "{}: {} does not exist ({})", video.filename().string(), tracked.tracks.string(),
          filtered ? "filter it first: labpose filter"
          : model.tracker
              ? "analyze it first: labpose analyze, with --tracker " + tracker_name(*model.tracker)
              : "analyze it first: labpose analyze");
      ++missing;
      continue;
    }
    use(tracked);
  }
  if (missing == 0) return;
  throw Error(
      fmt::format("{} video{} had no tracks {}", missing, missing == 1 ? "" : "s", what),
      "run labpose analyze (and labpose filter for --filtered) on them first, with the same "
      "--shuffle and --snapshot");
}

}  // namespace labpose::tools
