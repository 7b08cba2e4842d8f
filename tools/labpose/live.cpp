// labpose live --model <folder|config.yaml> (--video V | --camera SRC [--size WxH] [--fps F])
//   [--device D] [--precision P] [--output tracks.csv] [--for S] [--pcutoff P]
//   [--shuffle K] [--training-fraction F] [--snapshot S]
//   multi-animal projects: [--tracker ellipse|box]
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/multi_animal_analysis.hpp"
#include "pipeline/export/exported_model.hpp"
#include "pipeline/live/live.hpp"
#include "pipeline/live/live_animals.hpp"
#include "pipeline/live/live_csv.hpp"
#include "projects/yaml_text.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/model_options.hpp"
#include "tools/labpose/size_option.hpp"

namespace labpose::tools {

namespace {

struct LiveCommandOptions {
  std::string model, video, camera, size, output, precision = "fp32", tracker;
  std::string device = "cpu";
  std::optional<double> seconds;
  double fps = 0.0, pcutoff = -1.0, report = 5.0;
  ModelOptions choice;
};

// What a live run computes with: one animal's FramePredictor, or a multi-animal project's network,
// assembly and tracker.
struct LiveModel {
  std::string scorer, snapshot, device_text;
  std::vector<std::string> bodyparts;  // several animals: the multi-animal ones, then the unique
  std::optional<std::size_t> animal_bodyparts;  // several animals only
  double pcutoff = 0.6;
  std::string tracker;  // several animals: "ellipse" or "box"
  std::unique_ptr<pipeline::FramePredictor> predictor;
  std::unique_ptr<pipeline::LiveAnimalModel> animals;
};

// A multi-animal project's model, tracked by --tracker, else config.yaml's default_track_method,
// else the ellipse tracker.
LiveModel animal_model(const projects::ProjectConfig& config, const LiveCommandOptions& options) {
  const nets::PlanPrecision precision = devices::parse_plan_precision(options.precision);
  pipeline::check_multi_animal_precision(precision);
  const pipeline::TrackMethod tracker =
      options.tracker.empty()
          ? parse_tracker(config.values().default_track_method,
                          config.place("default_track_method") + ": default_track_method")
          : parse_tracker(options.tracker);
  if (tracker == pipeline::TrackMethod::identity) {
    throw UsageError("labpose live tracks with the ellipse or the box tracker, not identity",
                     "use --tracker ellipse or --tracker box (labpose analyze --tracker identity "
                     "links a recorded video by the identity head's votes)");
  }
  pipeline::AnalyzeOptions analyze;
  std::tie(analyze.shuffle, analyze.training_fraction) = options.choice.chosen_shuffle(config);
  std::tie(analyze.snapshot_index, analyze.best_snapshot) = options.choice.snapshot_choice();
  const pipeline::AnimalAnalysisModel chosen =
      pipeline::find_animal_analysis_model(config, analyze, tracker);
  LiveModel model;
  model.scorer = chosen.model.scorer;
  model.snapshot = chosen.model.snapshot.filename().string();
  model.bodyparts = chosen.model.bodyparts;
  model.animal_bodyparts = chosen.multi_bodyparts.size();
  model.pcutoff = chosen.model.pcutoff;
  model.tracker = tracker_name(tracker);
  model.animals = std::make_unique<pipeline::LiveAnimalModel>(chosen, options.device, precision);
  model.device_text = model.animals->device_text();
  return model;
}

// The model --model names: an exported folder or a project's config.yaml, of one animal or more.
LiveModel live_model(const LiveCommandOptions& options) {
  std::optional<projects::ProjectConfig> config;
  if (!std::filesystem::is_directory(options.model))
    config.emplace(load_project_config(options.model));
  if (config && config->values().multi_animal) return animal_model(*config, options);
  if (!options.tracker.empty()) {
    throw UsageError("--tracker is for multi-animal projects",
                     "a single-animal model follows its one animal without a tracker: leave it "
                     "out");
  }
  pipeline::AnalysisModel model;
  if (pipeline::is_exported_model(options.model)) {
    options.choice.refuse_with_exported_model();
    model = pipeline::exported_analysis_model(options.model);
  } else if (!config) {
    model = pipeline::exported_analysis_model(options.model);  // says what is missing
  } else {
    model = options.choice.find(*config);
  }
  pipeline::PredictorOptions predictor_options;
  predictor_options.device = options.device;
  predictor_options.precision = devices::parse_plan_precision(options.precision);
  predictor_options.batch_size = 1;
  LiveModel live;
  live.scorer = model.scorer;
  live.snapshot = model.snapshot.filename().string();
  live.bodyparts = model.bodyparts;
  live.pcutoff = model.pcutoff;
  live.predictor = std::make_unique<pipeline::FramePredictor>(model, predictor_options);
  live.device_text = live.predictor->device_text();
  return live;
}

// The end of a run: how often each bodypart reached pcutoff and, for several animals, how many
// were tracked.
void print_confidence(const LiveModel& model, const pipeline::LiveSummary& summary,
                      double pcutoff) {
  if (summary.frames == 0) return;
  const std::size_t per_animal = model.animal_bodyparts.value_or(0);
  if (model.animal_bodyparts) {
    console::info(
        "tracked ({} tracker, no stitching): {:.2f} animals per frame, {} tracks", model.tracker,
        static_cast<double>(summary.animals) / static_cast<double>(summary.frames), summary.tracks);
  }
  std::vector<std::string> rates;
  for (std::size_t j = 0; j < summary.confident.size() && j < model.bodyparts.size(); ++j) {
    // A multi-animal bodypart of every animal tracked; a unique one of every frame.
    const std::int64_t of = j < per_animal ? summary.animals : summary.frames;
    rates.push_back(fmt::format(
        "{} {:.0f} %", model.bodyparts[j],
        of > 0 ? 100.0 * static_cast<double>(summary.confident[j]) / static_cast<double>(of)
               : 0.0));
  }
  console::info("likelihood >= {}{}: {}", pcutoff,
                per_animal > 0 ? " (of the animals tracked)" : "", fmt::join(rates, ", "));
}

}  // namespace

Command live_command() {
  Command command;
  command.name = "live";
  command.summary = "pose frame by frame from a camera or video, with latency (DLC-Live)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<LiveCommandOptions>();
    app.add_option("--model", options->model,
                   "an exported model folder (labpose export) or a project's config.yaml")
        ->required();
    app.add_option("--video", options->video, "a video file: every frame, as fast as it runs");
    app.add_option("--camera", options->camera,
                   "a camera (/dev/videoN) or a live stream FFmpeg reads (a FIFO, a URL): the "
                   "newest frame each time, older ones dropped and counted");
    app.add_option("--size", options->size, "the camera's frame size, WIDTHxHEIGHT");
    app.add_option("--fps", options->fps, "the camera's frame rate")->check(CLI::PositiveNumber);
    app.add_option("--device", options->device, "cpu (default), auto, cuda or cuda:N");
    app.add_option(
        "--precision", options->precision,
        "fp32 (default), bf16, int8 (CPU, one animal), fp16 (GPU) or auto, as for analyze");
    app.add_option("--output", options->output,
                   "write the poses as a DeepLabCut tracks .csv, with timestamp and latency "
                   "columns (seconds); several animals: one row per animal, with its track id");
    app.add_option("--for", options->seconds, "stop after this many seconds")
        ->check(CLI::PositiveNumber);
    app.add_option("--pcutoff", options->pcutoff,
                   "report how often each bodypart is at least this likely (default: the model's "
                   "pcutoff)")
        ->check(CLI::Range(0.0, 1.0));
    app.add_option("--report-every", options->report,
                   "seconds between latency lines (0: only at the end)")
        ->check(CLI::NonNegativeNumber);
    options->choice.add_to(app, "whose network to use (with a config.yaml)");
    app.add_option(
        "--tracker", options->tracker,
        "multi-animal projects: link the animals frame to frame with the ellipse "
        "(default: config.yaml's default_track_method, else ellipse) or the box tracker");
    app.footer(
        "Runs the network on one frame at a time with its plan built once, and measures each "
        "frame's latency from the frame available (decoded) to its pose available. Every few "
        "seconds and at the end it prints p50/p95/p99 latency, frames/s and dropped frames. With "
        "--camera the newest frame is taken whenever the network is free and frames that arrived "
        "meanwhile are dropped, never queued. Ctrl-C stops it and writes what it has. For a "
        "multi-animal project each frame's animals are assembled as analyze assembles them and "
        "linked to the earlier frames' by the tracker, never stitched: an animal is named by its "
        "track id, and --output has one row per animal tracked.");
    return [options]() {
      if (options->video.empty() == options->camera.empty()) {
        throw UsageError("live needs one source: --video FILE or --camera /dev/videoN",
                         "--video runs every frame of a file (a latency benchmark); --camera takes "
                         "a camera's newest frames");
      }
      if (!options->camera.empty() && options->camera.rfind("/dev/video", 0) != 0 &&
          (!options->size.empty() || options->fps > 0)) {
        throw UsageError("--size and --fps set a camera's mode (/dev/videoN)",
                         "leave them out for a stream: it has its own size and rate");
      }
      const LiveModel model = live_model(*options);

      pipeline::LiveSource source;
      source.video = options->video;
      source.camera = options->camera;
      if (!options->size.empty())
        std::tie(source.capture.width, source.capture.height) =
            parse_size_option(options->size, "--size");
      source.capture.fps = options->fps;
      pipeline::LiveOptions live;
      live.seconds = options->seconds;
      live.report_seconds = options->report;
      live.pcutoff = options->pcutoff >= 0 ? options->pcutoff : model.pcutoff;

      std::optional<pipeline::LiveCsvWriter> csv;
      std::vector<pipeline::PoseProcessor*> processors;
      if (!options->output.empty()) {
        csv.emplace(options->output, model.scorer, model.bodyparts, model.animal_bodyparts);
        processors.push_back(&*csv);
      }
      console::info(
          "live: {} ({}) on {}, batch 1, {}from {}", model.scorer, model.snapshot,
          model.device_text,
          model.animals ? fmt::format("several animals, {} tracker, ", model.tracker) : "",
          source.camera.empty() ? source.video.string() : source.camera);
      pipeline::LiveSummary summary;
      {
        const InterruptHandler interrupts;
        summary = model.animals ? pipeline::run_live(*model.animals, source, live, processors)
                                : pipeline::run_live(*model.predictor, source, live, processors);
      }
      if (csv) {
        csv->finish();
        std::cout << options->output << '\n';
      }
      console::info("live{}: {}", summary.interrupted ? " (stopped)" : "",
                    pipeline::latency_text(summary));
      print_confidence(model, summary, live.pcutoff);
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
