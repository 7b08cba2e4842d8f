// labpose filter <config> <video|folder>... [--shuffle K] [--training-fraction F] [--snapshot S]
//   [--type median|savgol|spline|arima] [--window N] [--polyorder P] [--p-bound P] [--ar-degree 3]
//   [--ma-degree 1] [--alpha 0.01] [--dest D] [--no-csv]
//   multi-animal projects: [--track-method ellipse|box]
#include <fmt/core.h>

#include <iostream>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/filter.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {

Command filter_command() {
  Command command;
  command.name = "filter";
  command.summary = "smooth keypoint tracks (median, Savitzky-Golay) or fill their gaps (spline)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, type = "median", dest;
      std::vector<std::string> videos;
      ModelOptions model;
      pipeline::FilterOptions filter;
      bool no_csv = false;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("videos", options->videos, "analyzed videos, or folders of them")->required();
    options->model.add_to(app, "whose tracks to filter");
    options->model.add_track_method_to(app);
    app.add_option("--type", options->type, "median (default), savgol, spline or arima");
    app.add_option(
        "--window", options->filter.window,
        "samples in the window (odd; default 5); spline: the longest gap filled, 0 = all");
    app.add_option("--polyorder", options->filter.polyorder,
                   "savgol's polynomial order (default 3)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--p-bound", options->filter.p_bound,
                   "spline, arima: points below this likelihood count as missing (default 0.001)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--ar-degree", options->filter.ar_degree, "arima: AR order (default 3)")
        ->check(CLI::Range(0, 20));
    app.add_option("--ma-degree", options->filter.ma_degree, "arima: MA order (default 1)")
        ->check(CLI::Range(0, 20));
    app.add_option("--dest", options->dest,
                   "where analyze wrote the tracks (default: beside each video)");
    app.add_flag("--no-csv", options->no_csv, "do not write the .csv beside the filtered .h5");
    app.footer(
        "Reads <video stem><scorer>.h5 written by labpose analyze and writes "
        "<video stem><scorer>_filtered.h5 and .csv beside it (plot-trajectories and "
        "labeled-video use them with --filtered); for a multi-animal project it reads the "
        "stitched tracks <video stem><scorer>_el.h5 (_bx.h5 with --track-method box) and filters "
        "each individual's bodyparts into _el_filtered.h5 and .csv. median is scipy's medfilt "
        "(each x and y column, "
        "the ends padded with zeros, likelihoods kept), savgol is savgol_filter(mode=interp), "
        "spline fits a cubic spline (not-a-knot) through the points with likelihood >= --p-bound "
        "and "
        "fills gaps of at most --window frames, with likelihood 0.01 there; arima replaces each x "
        "and y by the one-step-ahead prediction of an ARMA(--ar-degree, --ma-degree) model fitted "
        "by maximum likelihood to the points with likelihood >= --p-bound (DeepLabCut's SARIMAX "
        "filter). Frames that could not be decoded (NaN rows) stay NaN unless spline fills them or "
        "arima predicts them.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      pipeline::FilterOptions filter = options->filter;
      filter.type = pipeline::parse_track_filter(options->type);
      const TrackedModel model = options->model.find_tracked(config);
      for_each_tracked_video(
          model, options->videos, options->dest, false, "to filter",
          [&](const TrackedVideo& tracked) {
            const projects::Table filtered =
                pipeline::filter_tracks(projects::read_table_hdf5(tracked.tracks), filter);
            std::cout << pipeline::write_filtered_tracks(filtered, tracked.tracks, !options->no_csv)
                             .string()
                      << '\n';
          });
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
