// labpose labeled-video <config> <video|folder>... [--shuffle K] [--training-fraction F]
//   [--snapshot S] [--filtered] [--skeleton] [--trail N] [--pcutoff P] [--dest D] [--overwrite]
//   multi-animal projects: [--track-method ellipse|box] [--color-by individual|bodypart]
//   [--no-names] [--draw-detections]
#include <fmt/core.h>

#include <iostream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/labeled_video.hpp"
#include "pipeline/analysis/multi_animal_files.hpp"
#include "pipeline/analysis/tracklet_files.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {

Command labeled_video_command() {
  Command command;
  command.name = "labeled-video";
  command.summary = "draw keypoint tracks onto videos";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, dest, color_by;
      std::vector<std::string> videos;
      ModelOptions model;
      bool filtered = false, skeleton = false, overwrite = false, no_names = false;
      bool draw_detections = false;
      int trail = 0;
      std::optional<double> pcutoff;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("videos", options->videos, "analyzed videos, or folders of them")->required();
    options->model.add_to(app, "whose tracks to draw");
    options->model.add_track_method_to(app);
    app.add_flag("--filtered", options->filtered, "draw the tracks labpose filter made");
    app.add_flag("--skeleton", options->skeleton, "connect the skeleton pairs of config.yaml");
    app.add_option("--trail", options->trail,
                   "also draw each point's positions in the previous N-1 frames")
        ->check(CLI::Range(0, 1000));
    app.add_option("--pcutoff", options->pcutoff,
                   "draw points with likelihood above this (default: config's pcutoff)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--dest", options->dest,
                   "where analyze wrote the tracks (default: beside each video)");
    app.add_flag("--overwrite", options->overwrite, "make labeled videos again that exist");
    app.add_option("--color-by", options->color_by,
                   "multi-animal projects: one colour per individual (default) or per bodypart");
    app.add_flag("--no-names", options->no_names,
                 "multi-animal projects: leave out the individuals' names");
    app.add_flag("--draw-detections", options->draw_detections,
                 "multi-animal projects: also draw every detection of <video stem><scorer>"
                 "_full.pickle at least pcutoff likely, small and grey, beneath the animals");
    app.footer(
        "Writes <tracks name>_p<100 x pcutoff>_labeled.mp4 beside the tracks (H.264): each "
        "bodypart as a filled disk of config.yaml's dotsize in its colormap colour when its "
        "likelihood is above pcutoff, with --skeleton the skeleton pairs in skeleton_color, with "
        "--trail N the positions of the previous N-1 frames as smaller disks. Tracks of a cropped "
        "analysis are drawn at their place in the whole frame. For a multi-animal project it draws "
        "the stitched tracks (<video stem><scorer>_el.h5, _bx.h5 with --track-method box) into "
        "<tracks name>_id_p<100 x pcutoff>_labeled.mp4 (_bp_ with --color-by bodypart): each "
        "individual in its own colour with its name beside its topmost keypoint, and its own "
        "skeleton; with --draw-detections every candidate keypoint of the analysis's _full.pickle "
        "beneath them, into <tracks name>_full_id_p<100 x pcutoff>_labeled.mp4.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      const auto& values = config.values();
      const TrackedModel model = options->model.find_tracked(config);
      pipeline::LabeledVideoOptions drawing;
      drawing.pcutoff = options->pcutoff.value_or(values.pcutoff);
      drawing.dotsize = values.dotsize;
      drawing.colormap = values.colormap;
      drawing.skeleton = options->skeleton;
      for (const auto& edge : values.skeleton)
        drawing.skeleton_edges.emplace_back(edge.from, edge.to);
      drawing.skeleton_color = values.skeleton_color;
      drawing.trail = options->trail;
      drawing.names = !options->no_names;
      std::string colouring;  // in the video's name, as DeepLabCut's
      if (model.tracker) {
        drawing.color_by = options->color_by.empty() ? pipeline::ColorBy::individual
                                                     : pipeline::parse_color_by(options->color_by);
        colouring = drawing.color_by == pipeline::ColorBy::individual ? "_id" : "_bp";
        if (options->draw_detections) colouring = "_full" + colouring;
      } else if (!options->color_by.empty() || options->no_names || options->draw_detections) {
        throw UsageError(fmt::format("{} is for multi-animal projects",
                                     options->no_names          ? "--no-names"
                                     : options->draw_detections ? "--draw-detections"
                                                                : "--color-by"),
                         "a single-animal project's videos are coloured by bodypart and have no "
                         "detections apart from their tracks: leave it out");
      }
      for_each_tracked_video(
          model, options->videos, options->dest, options->filtered, "to draw",
          [&](const TrackedVideo& tracked) {
            std::error_code error;
            const auto output =
                projects::labeled_video_path(tracked.tracks, drawing.pcutoff, colouring);
            if (!options->overwrite && std::filesystem::exists(output, error)) {
              console::info("{} exists; --overwrite makes it again", output.filename().string());
              std::cout << output.string() << '\n';
              return;
            }
            pipeline::LabeledVideoOptions for_video = drawing;
            if (const auto crop = pipeline::analysis_crop(tracked.files)) {
              for_video.crop_x = crop->x1;
              for_video.crop_y = crop->y1;
            }
            const projects::Table tracks = projects::read_table_hdf5(tracked.tracks);
            if (options->draw_detections) {
              const auto files = pipeline::multi_animal_files(
                  tracked.folder, projects::video_stem(tracked.video.string()), model.model.scorer,
                  *model.tracker);
              for_video.detections = pipeline::read_full_pickle_candidates(
                  files.full_pickle, static_cast<std::int64_t>(tracks.row_count()),
                  static_cast<int>(model.model.bodyparts.size()));
            }
            pipeline::write_labeled_video(tracked.video, tracks, for_video, output);
            std::cout << output.string() << '\n';
          });
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
