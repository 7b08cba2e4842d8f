// labpose plot-trajectories <config> <video|folder>... [--shuffle K] [--training-fraction F]
//   [--snapshot S] [--filtered] [--pcutoff P] [--dest D]
//   multi-animal projects: [--track-method ellipse|box]
#include <fmt/core.h>

#include <iostream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/trajectories.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {

Command plot_trajectories_command() {
  Command command;
  command.name = "plot-trajectories";
  command.summary = "plot keypoint tracks as PNG figures";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, dest;
      std::vector<std::string> videos;
      ModelOptions model;
      bool filtered = false;
      std::optional<double> pcutoff;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("videos", options->videos, "analyzed videos, or folders of them")->required();
    options->model.add_to(app, "whose tracks to plot");
    options->model.add_track_method_to(app);
    app.add_flag("--filtered", options->filtered, "plot the tracks labpose filter made");
    app.add_option("--pcutoff", options->pcutoff,
                   "plot points with likelihood >= this (default: config's pcutoff)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option(
        "--dest", options->dest,
        "where analyze wrote the tracks; the figures go there too (default: beside each video)");
    app.footer(
        "Writes plot-poses/<video stem>/trajectory.png (x against y, as in the video), plot.png (x "
        "dashed and y solid over the frames), plot-likelihood.png and hist.png (frame-to-frame "
        "changes of x and y, 100 bins), with _filtered in the names for --filtered, in the "
        "config's colormap. For a multi-animal project it plots the stitched tracks "
        "(<video stem><scorer>_el.h5, _bx.h5 with --track-method box): the four figures for each "
        "individual, named as DeepLabCut's (trajectorymouse1.png, trajectory_filteredmouse1.png, "
        "..., and single for the unique bodyparts), each bodypart in the same colour in all.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      const TrackedModel model = options->model.find_tracked(config);
      pipeline::TrajectoryPlotOptions plot;
      plot.pcutoff = options->pcutoff.value_or(config.values().pcutoff);
      plot.colormap = config.values().colormap;
      plot.filtered = options->filtered;
      for_each_tracked_video(
          model, options->videos, options->dest, options->filtered, "to plot",
          [&](const TrackedVideo& tracked) {
            const std::string stem = projects::video_stem(tracked.video.string());
            for (const auto& png : pipeline::plot_trajectories(
                     projects::read_table_hdf5(tracked.tracks),
                     projects::trajectory_plots_folder(tracked.folder, stem), plot)) {
              std::cout << png.string() << '\n';
            }
          });
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
