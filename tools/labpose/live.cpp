// labpose live --model <folder|config.yaml> (--video V | --camera SRC [--size WxH] [--fps F])
//   [--device D] [--precision P] [--output tracks.csv] [--for S] [--pcutoff P]
//   [--shuffle K] [--training-fraction F] [--snapshot S]
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <iostream>
#include <optional>
#include <tuple>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "devices/devices.hpp"
#include "pipeline/export/exported_model.hpp"
#include "pipeline/live/live.hpp"
#include "pipeline/live/live_csv.hpp"
#include "projects/yaml_text.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/model_options.hpp"
#include "tools/labpose/size_option.hpp"

namespace labpose::tools {

Command live_command() {
  Command command;
  command.name = "live";
  command.summary = "pose frame by frame from a camera or video, with latency (DLC-Live)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string model, video, camera, size, output, precision = "fp32";
      std::string device = "cpu";
      std::optional<double> seconds;
      double fps = 0.0, pcutoff = -1.0, report = 5.0;
      ModelOptions choice;
    };
    auto options = std::make_shared<Options>();
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
    app.add_option("--precision", options->precision,
                   "fp32 (default), bf16, int8 (CPU), fp16 (GPU) or auto, as for analyze");
    app.add_option("--output", options->output,
                   "write the poses as a DeepLabCut tracks .csv, with timestamp and latency "
                   "columns (seconds)");
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
    app.footer(
        "Runs the network on one frame at a time with its plan built once, and measures each "
        "frame's latency from the frame available (decoded) to its pose available. Every few "
        "seconds and at the end it prints p50/p95/p99 latency, frames/s and dropped frames. With "
        "--camera the newest frame is taken whenever the network is free and frames that arrived "
        "meanwhile are dropped, never queued. Ctrl-C stops it and writes what it has.");
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
      pipeline::AnalysisModel model;
      if (pipeline::is_exported_model(options->model)) {
        options->choice.refuse_with_exported_model();
        model = pipeline::exported_analysis_model(options->model);
      } else if (std::filesystem::is_directory(options->model)) {
        model = pipeline::exported_analysis_model(options->model);  // says what is missing
      } else {
        model = options->choice.find(load_project_config(options->model));
      }
      pipeline::PredictorOptions predictor_options;
      predictor_options.device = options->device;
      predictor_options.precision = devices::parse_plan_precision(options->precision);
      predictor_options.batch_size = 1;
      pipeline::FramePredictor predictor(model, predictor_options);

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
        csv.emplace(options->output, model.scorer, model.bodyparts);
        processors.push_back(&*csv);
      }
      console::info("live: {} ({}) on {}, batch 1, from {}", model.scorer,
                    model.snapshot.filename().string(), predictor.device_text(),
                    source.camera.empty() ? source.video.string() : source.camera);
      pipeline::LiveSummary summary;
      {
        const InterruptHandler interrupts;
        summary = pipeline::run_live(predictor, source, live, processors);
      }
      if (csv) {
        csv->finish();
        std::cout << options->output << '\n';
      }
      console::info("live{}: {}", summary.interrupted ? " (stopped)" : "",
                    pipeline::latency_text(summary));
      if (summary.frames > 0) {
        std::vector<std::string> rates;
        for (std::size_t j = 0; j < summary.confident.size(); ++j) {
          rates.push_back(fmt::format("{} {:.0f} %", model.bodyparts[j],
                                      100.0 * static_cast<double>(summary.confident[j]) /
                                          static_cast<double>(summary.frames)));
        }
        console::info("likelihood >= {}: {}", live.pcutoff, fmt::join(rates, ", "));
      }
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
