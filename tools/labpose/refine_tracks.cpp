// labpose refine-tracks <config> <video> [--tracks FILE] [--shuffle K] [--training-fraction F]
//   [--snapshot S] [--track-method ellipse|box] [--dest D]
//   --swap A,B --from F [--to T] [--swap ... --from ...]
//   or, to serve the page instead: [--port P] [--host H] [--no-browser]
// DeepLabCut's tracklet refinement without a desktop: two individuals of a multi-animal video's
// stitched tracks (_el.h5) swapped from a frame on, saved back in place (the first version kept as
// <file>.orig). The swapping and saving are pipeline/analysis/track_refinement.hpp.
#include <fmt/core.h>

#include <iostream>
#include <optional>

#include <chrono>
#include <thread>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "labeling/track_server.hpp"
#include "pipeline/analysis/track_refinement.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/label.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {
namespace {
namespace fs = std::filesystem;

struct RefineTracksOptions {
  std::string config, video, tracks, dest, host = "127.0.0.1";
  int port = 0;
  bool no_browser = false;
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
  std::error_code error;
  if (fs::is_directory(options.video, error)) {
    throw UsageError(
        fmt::format("{} is a folder; refine-tracks refines the tracks of one video", options.video),
        "name one video file, e.g. " + (fs::path(options.video) / "mice.mp4").string());
  }
  if (!options.tracks.empty()) return options.tracks;
  if (!config.values().multi_animal) {
    throw UsageError(fmt::format("{} is not a multi-animal project: its tracks have no "
                                 "individuals to swap",
                                 options.config),
                     "refine-tracks is for the stitched tracks (_el.h5) of several animals");
  }
  std::vector<fs::path> found;
  for_each_tracked_video(options.model.find_tracked(config), {options.video}, options.dest, false,
                         "to refine",
                         [&](const TrackedVideo& tracked) { found.push_back(tracked.tracks); });
  if (found.size() != 1) {
    throw UsageError(fmt::format("{} names {} videos; refine-tracks refines the tracks of one",
                                 options.video, found.size()),
                     "name one video file");
  }
  return found.front();
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

// The page: serves until Ctrl-C, then says what was left unsaved.
int serve_page(const RefineTracksOptions& options, const projects::ProjectConfig& config,
               const fs::path& file) {
  labeling::ServerOptions server_options;
  server_options.host = options.host;
  server_options.port = options.port;
  InterruptHandler interrupt;
  labeling::TrackServer server(config, options.video, file, server_options);
  if (!labeling::is_loopback_host(options.host)) {
    console::warn(
        "serving on {}, not 127.0.0.1: anyone who can reach this machine and has the token can "
        "change the tracks (plain HTTP, no encryption)",
        options.host);
  }
  server.start();
  console::info(
      "refining {} on port {}; from another computer: ssh -L {}:127.0.0.1:{} <this machine>, "
      "then open the URL there",
      file.string(), server.port(), server.port(), server.port());
  std::cout << server.url() << std::endl;
  console::info("Ctrl-C stops the server; swaps are written only by the page's save button");
  if (!options.no_browser && !console::headless()) open_browser(server.url());
  while (!interrupt_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server.stop();
  const auto unsaved = server.session().unsaved().size();
  if (unsaved > 0) {
    console::warn("{} swap{} not saved: {} is as it was at the last save", unsaved,
                  unsaved == 1 ? " was" : "s were", file.string());
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
    app.add_option("--port", options->port, "the page's port (default: a free one)")
        ->check(CLI::Range(0, 65535));
    app.add_option("--host", options->host,
                   "the address to serve the page on (default 127.0.0.1: this machine only; reach "
                   "it from elsewhere with ssh -L)");
    app.add_flag("--no-browser", options->no_browser, "do not open a browser");
    app.footer(
        "Swaps every bodypart (x, y, likelihood) of the two individuals from --from to --to (both "
        "included) and writes the tracks back into the same file, under the same key and in the "
        "same layout, with the .csv beside it when there is one. Before the first change the file "
        "is kept as <file>.orig (never overwritten afterwards). \"single\" (the unique "
        "bodyparts) cannot be swapped. Without --swap it serves a page instead (prints its URL, "
        "as labpose label does): the video's frames with each track drawn in its individual's "
        "colour, \"swap A and B from this frame on\", undo, and save, which writes the file as "
        "above. Stop it with Ctrl-C.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      const fs::path file = tracks_file(*options, config);
      if (options->swaps.empty()) {
        if (!options->from.empty() || !options->to.empty())
          throw UsageError("--from and --to go with --swap",
                           "e.g. --swap mouse1,mouse2 --from 120");
        return serve_page(*options, config, file);
      }
      return swap_and_save(*options, file);
    };
  };
  return command;
}

}  // namespace labpose::tools
