// labpose stitch <config> <video|folder>... [--tracker ellipse|box|identity] [--n-tracks N]
//   [--min-length L] [--max-gap G] [--csv] [--shuffle K] [--training-fraction F] [--snapshot S]
//   [--dest D] [--overwrite]
// DeepLabCut's stitch_tracklets: a multi-animal video's tracklets (_el.pickle, from labpose track
// or analyze, or DeepLabCut's) joined into one track per individual, written as _el.h5 (.csv).
#include <CLI/CLI.hpp>

#include "pipeline/analysis/multi_animal_tracking.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/track_step.hpp"

namespace labpose::tools {

Command stitch_command() {
  Command command;
  command.name = "stitch";
  command.summary =
      "join a multi-animal video's tracklets into one track per animal (DeepLabCut's "
      "stitch_tracklets)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<TrackStepCli>();
    options->add_to(app, "tracklets to read");
    pipeline::TrackStepOptions& step = options->step;
    app.add_option("--n-tracks", step.n_tracks,
                   "tracks to make (default: the number of individuals in config.yaml)")
        ->check(CLI::PositiveNumber);
    app.add_option("--min-length", step.min_length,
                   "shorter tracklets are set aside and put back after stitching (default 10)")
        ->check(CLI::Range(3, 100'000'000));
    app.add_option("--max-gap", step.max_gap,
                   "the longest gap in frames a link may bridge (default: 1.5 x the largest gap "
                   "between a tracklet and the next)")
        ->check(CLI::PositiveNumber);
    app.add_flag("--csv", step.analyze.csv, "also write the tracks as .csv");
    app.footer(
        "Reads <video stem><scorer>_el.pickle (_bx.pickle with --tracker box), which labpose "
        "track and labpose analyze write, and writes the tracks <stem><scorer>_el.h5 (pandas, key "
        "tracks: scorer/individuals/bodyparts/coords columns, one track per individual, then "
        "single for the unique bodyparts; one row per frame) and with --csv _el.csv. Videos whose "
        "tracks exist are skipped (--overwrite to stitch them again, e.g. with other settings).");
    return [options]() { return options->run(pipeline::stitch_videos); };
  };
  return command;
}

}  // namespace labpose::tools
