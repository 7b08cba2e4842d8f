// labpose analyze <config> <video|folder>... [--shuffle K] [--training-fraction F] [--snapshot S]
//   [--device D] [--precision P] [--against-fp32] [--batch-size B] [--csv] [--dest D]
//   [--crop x1,x2,y1,y2] [--shard i/n] [--overwrite]
//   multi-animal projects: [--tracker ellipse|box|identity] [--no-track] [--no-temporal-prior]
// labpose analyze --model <exported folder> <video|folder>... [the same options]
#include <fmt/core.h>

#include <iostream>
#include <tuple>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "devices/devices.hpp"
#include "devices/world.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/multi_animal_analysis.hpp"
#include "projects/yaml_text.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/decode_option.hpp"
#include "tools/labpose/model_options.hpp"
#include "tools/labpose/track_step.hpp"

namespace labpose::tools {
namespace {

// "i/n" -> (i, n).
std::pair<int, int> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto index = projects::yaml_text::parse_int(text.substr(0, slash));
  const auto count = slash == std::string::npos
                         ? std::nullopt
                         : projects::yaml_text::parse_int(text.substr(slash + 1));
  if (!index || !count) {
    throw UsageError(fmt::format("--shard {} is not i/n", text),
                     "e.g. --shard 0/4 (the first of four jobs; i counts from 0)");
  }
  return {static_cast<int>(*index), static_cast<int>(*count)};
}

projects::CropBox parse_crop_option(const std::string& text) {
  const auto crop = projects::parse_crop(text);
  if (!crop) {
    throw UsageError(fmt::format("--crop {} is not x1,x2,y1,y2", text),
                     "four whole pixel numbers with x1 < x2 and y1 < y2, e.g. --crop 0,320,0,240");
  }
  return *crop;
}

// --tracker, --no-track and --no-temporal-prior, for a multi-animal project; refused for a
// single-animal one.
pipeline::MultiAnimalOptions multi_animal_options(const std::string& tracker, bool no_track,
                                                  bool no_prior, bool multi_animal) {
  if (!multi_animal && (!tracker.empty() || no_track || no_prior)) {
    const char* option = no_track ? "--no-track" : no_prior ? "--no-temporal-prior" : "--tracker";
    throw UsageError(fmt::format("{} is for multi-animal projects", option),
                     "a single-animal project has one animal per frame: leave it out");
  }
  pipeline::MultiAnimalOptions multi;
  multi.track = !no_track;
  multi.temporal_prior = !no_prior;
  multi.tracker = parse_tracker(tracker);
  return multi;
}

// What `analyze` was given on its command line.
struct AnalyzeCliOptions {
  std::string config, crop, shard, dest, precision = "fp32", model_folder, tracker;
  bool no_track = false, no_temporal_prior = false;
  std::vector<std::string> videos;
  ModelOptions model;
  pipeline::AnalyzeOptions analyze;
};

// The analysis itself, once the command line is parsed.
int run_analyze(const AnalyzeCliOptions& options) {
  std::vector<std::string> video_arguments = options.videos;
  std::optional<pipeline::AnalysisModel> model;
  if (!options.model_folder.empty()) {
    options.model.refuse_with_exported_model();
    if (!options.config.empty()) video_arguments.insert(video_arguments.begin(), options.config);
    model = pipeline::exported_analysis_model(options.model_folder);
  } else if (options.config.empty()) {
    throw UsageError("analyze needs the project's config.yaml and the videos to analyze",
                     "labpose analyze <config.yaml> <video>..., or labpose analyze --model "
                     "<exported folder> <video>...");
  }
  if (video_arguments.empty()) {
    throw UsageError("no videos to analyze", "name videos, or folders of videos, after " +
                                                 std::string(model ? "--model" : "config.yaml"));
  }
  pipeline::AnalyzeOptions analyze = options.analyze;
  analyze.precision = devices::parse_plan_precision(options.precision);
  std::optional<projects::ProjectConfig> config;
  if (!model) {
    config.emplace(load_project_config(options.config));
  }
  const bool multi_animal = config && config->values().multi_animal;
  const pipeline::MultiAnimalOptions multi = multi_animal_options(
      options.tracker, options.no_track, options.no_temporal_prior, multi_animal);
  if (multi_animal) pipeline::check_multi_animal_options(analyze);
  if (config) {
    std::tie(analyze.shuffle, analyze.training_fraction) = options.model.chosen_shuffle(*config);
    std::tie(analyze.snapshot_index, analyze.best_snapshot) = options.model.snapshot_choice();
    if (!multi_animal) {
      model = pipeline::find_analysis_model(*config, analyze.shuffle, analyze.training_fraction,
                                            analyze.snapshot_index, analyze.best_snapshot);
    }
  }
  if (!options.crop.empty()) analyze.crop = parse_crop_option(options.crop);
  if (!options.shard.empty()) {
    std::tie(analyze.shard_index, analyze.shard_count) = parse_shard(options.shard);
  }
  // Under mpirun or srun each rank analyzes its share of the videos on its own device; the
  // ranks never exchange anything, so no MPI is started.
  if (const devices::Launch launch = devices::launch_from_environment(); launch.size > 1) {
    if (!options.shard.empty()) {
      throw UsageError(
          fmt::format("--shard {} and {} both share out the videos", options.shard,
                      launch.launcher),
          "use one of them: leave out --shard under mpirun/srun, or start one labpose per "
          "shard without a launcher");
    }
    analyze.shard_index = launch.rank;
    analyze.shard_count = launch.size;
    analyze.device = devices::launched_device(analyze.device, launch);
  }
  if (!options.dest.empty()) analyze.dest = options.dest;
  std::vector<std::filesystem::path> inputs(video_arguments.begin(), video_arguments.end());
  const auto videos = pipeline::videos_to_analyze(inputs, analyze.shard_index, analyze.shard_count);
  if (videos.empty()) {
    console::info("shard {}/{} has no videos (there are fewer videos than shards)",
                  analyze.shard_index, analyze.shard_count);
    return 0;
  }
  std::vector<pipeline::VideoAnalysis> results;
  {
    const InterruptHandler interrupts;
    results = multi_animal ? pipeline::analyze_multi_animal_videos(*config, videos, analyze, multi)
                           : pipeline::analyze_videos(*model, videos, analyze);
  }
  int failed = 0;
  for (const auto& result : results) {
    switch (result.outcome) {
      case pipeline::VideoAnalysis::Outcome::analyzed:
        std::cout << result.files.h5.string() << '\n';
        console::info("{}: {} frames in {:.1f} s ({:.1f} frames/s){}",
                      result.video.filename().string(), result.frames, result.seconds,
                      result.frames_per_second,
                      result.undecodable_frames.empty()
                          ? ""
                          : fmt::format(", {} NaN rows for frames that could not be decoded",
                                        result.undecodable_frames.size()));
        break;
      case pipeline::VideoAnalysis::Outcome::skipped:
        std::cout << result.files.h5.string() << '\n';
        break;
      case pipeline::VideoAnalysis::Outcome::failed:
        ++failed;
        break;
    }
  }
  if (failed > 0) {
    throw Error(
        fmt::format("{} of {} videos could not be analyzed (see above)", failed, results.size()),
        "fix or remove those videos and run the same command again: finished videos "
        "are skipped");
  }
  return 0;
}

}  // namespace

Command analyze_command() {
  Command command;
  command.name = "analyze";
  command.summary = "track the bodyparts in videos with a trained network (DeepLabCut's .h5/.csv)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    auto options = std::make_shared<AnalyzeCliOptions>();
    app.add_option("config", options->config,
                   "the project's config.yaml (not with --model: then every argument is a video)");
    app.add_option("videos", options->videos, "videos, or folders of videos");
    options->model.add_to(app, "whose network to use");
    app.add_option("--model", options->model_folder,
                   "an exported model folder (labpose export) to use instead of a project's");
    app.add_option("--device", options->analyze.device, "cpu (default), auto, cuda or cuda:N");
    app.add_option("--precision", options->precision,
                   "the network's arithmetic: fp32 (default); bf16 on a CPU with bf16 units "
                   "(AVX-512 BF16 or AMX) or a GPU of compute capability 8.0+; int8 on a CPU with "
                   "VNNI (single-animal projects; calibrated once on the shuffle's training "
                   "images); fp16 on a GPU; tf32: "
                   "fp32 with TF32 convolutions on a GPU of compute capability 8.0+; auto: bf16 "
                   "where the CPU has bf16 units, else fp32");
    app.add_flag("--against-fp32", options->analyze.against_fp32,
                 "with --precision bf16 or int8: also analyze each video in fp32 and report how "
                 "far the keypoints moved (printed, and in the _meta.json)");
    app.add_option("--batch-size", options->analyze.batch_size,
                   "frames per batch (default: config.yaml's batch_size)")
        ->check(CLI::Range(1, 4096));
    app.add_flag("--csv", options->analyze.csv, "also write the tracks as .csv");
    app.add_option("--dest", options->dest, "write the outputs here (default: beside each video)");
    app.add_option("--crop", options->crop,
                   "analyze only this part of the frames, x1,x2,y1,y2 in pixels (default: "
                   "config.yaml's when cropping is true); coordinates are then crop-relative");
    app.add_option("--shard", options->shard,
                   "i/n: this job's share of the videos, every n-th from the i-th (i from 0), for "
                   "cluster array jobs; under mpirun or srun each rank takes its share itself");
    app.add_flag("--overwrite", options->analyze.overwrite, "analyze videos again that are done");
    app.add_option("--threads", options->analyze.decoder_threads,
                   "decoder threads (default: one when the network runs on the CPU, at background "
                   "priority; one per core with a GPU)")
        ->check(CLI::NonNegativeNumber);
    add_decode_option(app, &options->analyze.decode_on_gpu);
    app.add_option("--tracker", options->tracker,
                   "multi-animal projects: link animals frame to frame with the ellipse tracker "
                   "(default; <stem><scorer>_el.pickle/.h5), the box tracker (_bx) or, for a "
                   "network trained with identity: true, by its identity votes alone (_id)");
    app.add_flag("--no-track", options->no_track,
                 "multi-animal projects: write the detections and assemblies only "
                 "(_full.pickle, _assemblies.pickle), no tracklets or tracks (DeepLabCut's "
                 "auto_track=False)");
    app.add_flag("--no-temporal-prior", options->no_temporal_prior,
                 "multi-animal projects: assemble every frame on its own, as DeepLabCut does. "
                 "By default a link between two bodyparts that the previous frame put in two "
                 "different animals is weakened, and waits until each previous animal has been "
                 "rebuilt from its own links (docs/analysis.md)");
    app.add_option("--slots", options->analyze.slots,
                   "batches on the device at once, each with its own copy of the network (default: "
                   "3 on a GPU, so that uploads and downloads overlap the network; 1 on the CPU)")
        ->check(CLI::Range(1, 8));
    app.footer(
        "Writes <video stem><scorer>.h5 (pandas, key df_with_missing: scorer/bodyparts/coords "
        "columns x, y, likelihood, one row per frame; frames that cannot be decoded are NaN rows), "
        "with --csv the same as .csv, <stem><scorer>_meta.pickle (DeepLabCut's metadata) and "
        "<stem><scorer>_meta.json (labpose's: model, device, timings, bad frames, crop). The "
        "scorer is DLC_<net>_<Task><date>shuffle<K>_<iterations>. Finished videos are skipped "
        "(--overwrite to redo them); an interrupted one (Ctrl-C, kill, a cluster time limit) "
        "resumes from its .labpose-checkpoint file when the command runs again. In a multi-animal "
        "project it writes DeepLabCut's <stem><scorer>_full.pickle and _assemblies.pickle, the "
        "tracklets _el.pickle and the tracks _el.h5 (key tracks: scorer/individuals/bodyparts/"
        "coords columns, one track per individual; --csv adds _el.csv), and resumes from its "
        ".labpose-detections file.");
    return [options]() { return run_analyze(*options); };
  };
  return command;
}

}  // namespace labpose::tools
