// labpose refine-tracks <config> <video> [--tracks FILE] [--shuffle K] [--training-fraction F]
//   [--snapshot S] [--track-method ellipse|box] [--dest D]
//   --swap A,B --from F [--to T] [--swap ... --from ...]
// DeepLabCut's tracklet refinement without a desktop: two individuals of a multi-animal video's
// stitched tracks (_el.h5) swapped from a frame on, saved back in place (the first version kept as
// <file>.orig). The swapping and saving are pipeline/analysis/track_refinement.hpp.
#include <fmt/core.h>

#include <iostream>
#include <optional>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/track_refinement.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {
namespace {
namespace fs = std::filesystem;

struct RefineTracksOptions {
  std::string config, video, tracks, dest;
  ModelOptions model;
  std::vector<std::string> swaps;
  std::vector<std::int64_t> from, to;
};

// "A,B" as two names.
std::pair<std::string, std::string> swap_names(const std::string& text) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos || comma == 0 || comma + 1 == text.size() ||
      text.find(',', comma + 1) != std::string::npos) {
    throw UsageError(
        fmt::format("--swap takes two individuals joined by a comma (found \"{}\")", text),
        "e.g. --swap mouse1,mouse2 --from 120");
  }
  return {text.substr(0, comma), text.substr(comma + 1)};
}

// The swaps of the command line, in the order given: the i-th --swap with the i-th --from (and
// --to, when given for every swap).
std::vector<pipeline::TrackSwap> swaps_of(const RefineTracksOptions& options) {
  if (options.from.size() != options.swaps.size()) {
    throw UsageError(fmt::format("each --swap needs its --from (found {} --swap and {} --from)",
                                 options.swaps.size(), options.from.size()),
                     "e.g. --swap mouse1,mouse2 --from 120 --swap mouse2,mouse3 --from 400");
  }
  if (!options.to.empty() && options.to.size() != options.swaps.size()) {
    throw UsageError(fmt::format("--to is given for every --swap or for none (found {} --swap "
                                 "and {} --to)",
                                 options.swaps.size(), options.to.size()),
                     "leave --to out to swap to the end of the video");
  }
  std::vector<pipeline::TrackSwap> swaps;
  for (std::size_t i = 0; i < options.swaps.size(); ++i) {
    auto [first, second] = swap_names(options.swaps[i]);
    swaps.push_back({std::move(first), std::move(second), options.from[i],
                     options.to.empty() ? std::nullopt : std::optional(options.to[i])});
  }
  return swaps;
}

// The tracks file of the video: --tracks, or the stitched tracks analyze wrote for the model.
fs::path tracks_file(const RefineTracksOptions& options, const projects::ProjectConfig& config) {
  if (!options.tracks.empty()) return options.tracks;
  if (!config.values().multi_animal) {
    throw UsageError(fmt::format("{} is not a multi-animal project: its tracks have no "
                                 "individuals to swap",
                                 options.config),
                     "refine-tracks is for the stitched tracks (_el.h5) of several animals");
  }
  fs::path found;
  for_each_tracked_video(options.model.find_tracked(config), {options.video}, options.dest, false,
                         "to refine", [&](const TrackedVideo& tracked) { found = tracked.tracks; });
  return found;
}

int swap_and_save(const RefineTracksOptions& options, const fs::path& file) {
  const std::vector<pipeline::TrackSwap> swaps = swaps_of(options);
  pipeline::RefinableTracks tracks = pipeline::read_refinable_tracks(file);
  for (const auto& swap : swaps) {
    pipeline::swap_individuals(tracks.table, swap, file);
    console::info("swapped {} and {} in frames {} to {}", swap.first, swap.second, swap.from,
                  swap.to ? *swap.to : static_cast<std::int64_t>(tracks.table.row_count()) - 1);
  }
  for (const auto& written : pipeline::save_refined_tracks(tracks)) {
    std::cout << written.string() << '\n';
    console::info("{} as it was first is kept in {}", written.filename().string(),
                  pipeline::original_tracks_path(written).string());
  }
  return 0;
}

}  // namespace

Command refine_tracks_command() {
  Command command;
  command.name = "refine-tracks";
  command.summary =
      "swap two animals' identities in a video's stitched tracks (DeepLabCut's tracklet "
      "refinement)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<RefineTracksOptions>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("video", options->video, "the analyzed video")->required();
    app.add_option("--tracks", options->tracks,
                   "the tracks file to refine (default: the video's <stem><scorer>_el.h5 from "
                   "labpose analyze, or _bx.h5 with --track-method box)");
    options->model.add_to(app, "whose tracks to refine");
    options->model.add_track_method_to(app);
    app.add_option("--dest", options->dest,
                   "where analyze wrote the tracks (default: beside the video)");
    app.add_option("--swap", options->swaps,
                   "two individuals to swap, e.g. mouse1,mouse2 (repeat for several swaps, done "
                   "in order)");
    app.add_option("--from", options->from, "the first frame of each --swap (0 is the first)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--to", options->to,
                   "the last frame of each --swap, included (default: the last frame)")
        ->check(CLI::NonNegativeNumber);
    app.footer(
        "Swaps every bodypart (x, y, likelihood) of the two individuals from --from to --to (both "
        "included) and writes the tracks back into the same file, under the same key and in the "
        "same layout, with the .csv beside it when there is one. Before the first change the file "
        "is kept as <file>.orig (never overwritten afterwards). \"single\" (the unique "
        "bodyparts) cannot be swapped.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      if (options->swaps.empty()) {
        throw UsageError("nothing to do: give --swap NAME1,NAME2 --from FRAME",
                         "e.g. labpose refine-tracks config.yaml video.mp4 --swap mouse1,mouse2 "
                         "--from 120");
      }
      return swap_and_save(*options, tracks_file(*options, config));
    };
  };
  return command;
}

}  // namespace labpose::tools
