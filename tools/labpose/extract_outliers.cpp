// labpose extract-outliers <config> <video|folder>... [--algo jump|uncertain|fitting] [--epsilon E]
//   [--p-bound P] [--ar-degree 3] [--ma-degree 1] [--alpha A] [--bodyparts B...] [--shuffle K]
//   [--training-fraction F] [--snapshot S] [--dest D] [--extraction kmeans|uniform] [--num N] ...
//   multi-animal projects: [--track-method ellipse|box]
#include <fmt/core.h>

#include <iostream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/outliers.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/frame_options.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {

Command extract_outliers_command() {
  Command command;
  command.name = "extract-outliers";
  command.summary = "extract frames where the network is unsure or jumps, for relabeling";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, algorithm = "jump", dest;
      std::vector<std::string> videos;
      ModelOptions model;
      FrameOptions frames;
      pipeline::OutlierOptions outliers;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("videos", options->videos, "analyzed videos of the project, or folders of them")
        ->required();
    app.add_option("--algo", options->algorithm,
                   "jump: a keypoint moves more than --epsilon px from the previous frame "
                   "(default); uncertain: a likelihood below --p-bound; fitting: the mean distance "
                   "from an ARMA fit of each track is more than --epsilon px")
        ->check(CLI::IsMember({"jump", "uncertain", "fitting"}));
    app.add_option("--epsilon", options->outliers.epsilon, "px, for jump and fitting (default 20)")
        ->check(CLI::Range(0.0, 1e6));
    app.add_option("--p-bound", options->outliers.p_bound,
                   "likelihood bound for uncertain; fitting treats points below it as missing "
                   "(default 0.01)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--ar-degree", options->outliers.ar_degree, "fitting: AR order (default 3)")
        ->check(CLI::Range(0, 20));
    app.add_option("--ma-degree", options->outliers.ma_degree, "fitting: MA order (default 1)")
        ->check(CLI::Range(0, 20));
    app.add_option("--alpha", options->outliers.alpha,
                   "fitting: significance level of the fit's confidence interval (default 0.01)")
        ->check(CLI::Range(1e-9, 0.999999));
    app.add_option("--bodyparts", options->outliers.bodyparts,
                   "compare only these bodyparts (default: all)");
    options->model.add_to(app, "whose tracks to use");
    options->model.add_track_method_to(app);
    app.add_option("--dest", options->dest,
                   "where analyze wrote the tracks (default: beside each video)");
    options->frames.add_to(app, "--extraction");
    app.footer(
        "Reads the tracks labpose analyze wrote (<video stem><scorer>.h5), finds the outlier "
        "frames in the config's start..stop range, picks --num of them (default numframes2pick; "
        "kmeans or uniform among the outliers, never a frame already extracted), writes them as "
        "labeled-data/<video>/img<frame>.png and adds the network's predictions at those frames "
        "to labeled-data/<video>/machinelabels-iter<K>.h5 and machinelabels.csv. Review them with "
        "labpose label --refine, then labpose merge and create-dataset for the next iteration. "
        "The videos must be in the project (labpose add-videos). For a multi-animal project it "
        "searches the stitched tracks (<video stem><scorer>_el.h5, _bx.h5 with --track-method "
        "box) individual by individual, so that jump finds identity swaps (a track that leaps to "
        "another animal), and the machine labels have DeepLabCut's four header rows.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      pipeline::OutlierOptions outliers = options->outliers;
      outliers.algorithm = pipeline::parse_outlier_algorithm(options->algorithm);
      const TrackedModel model = options->model.find_tracked(config);
      const pipeline::ExtractFramesOptions frames = options->frames.resolve();
      std::size_t total = 0;
      for_each_tracked_video(
          model, options->videos, options->dest, false, "to search for outliers",
          [&](const TrackedVideo& tracked) {
            // A multi-animal project's stitched tracks, searched per individual.
            pipeline::AnalysisFiles files = tracked.files;
            files.h5 = tracked.tracks;
            const pipeline::OutlierVideo result = pipeline::extract_outlier_frames(
                config, tracked.video.string(), files, outliers, frames);
            const auto& extracted = result.extracted;
            for (const std::int64_t index : extracted.frames) {
              std::cout << (extracted.folder /
                            projects::frame_image_name(index, extracted.frame_count))
                               .string()
                        << '\n';
            }
            total += extracted.frames.size();
            console::info("labeled-data/{}: {} new frame{} of {} outliers{}", extracted.stem,
                          extracted.frames.size(), extracted.frames.size() == 1 ? "" : "s",
                          result.outliers.size(),
                          extracted.frames.empty()
                              ? ""
                              : fmt::format("; predictions in {}",
                                            result.machine_labels.filename().string()));
          });
      console::info("extracted {} outlier frame{}; next: labpose label {} --refine", total,
                    total == 1 ? "" : "s", options->config);
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
