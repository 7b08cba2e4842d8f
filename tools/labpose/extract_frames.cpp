// labpose extract-frames <config> [--algo kmeans|uniform] [--num N] [--crop] [--videos V...]
//   [--cluster-resize-width 30] [--cluster-color] [--seed S] [--threads N]
#include <fmt/core.h>

#include <iostream>
#include <random>

#include "core/console.hpp"
#include "pipeline/frames/extract.hpp"
#include "projects/config.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {

Command extract_frames_command() {
  Command command;
  command.name = "extract-frames";
  command.summary = "extract frames to label from the project's videos (uniform or k-means)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config, algorithm = "kmeans";
      std::optional<int> frames;
      bool crop = false, cluster_color = false;
      std::vector<std::string> videos;
      int cluster_resize_width = 30, threads = 0;
      std::optional<std::uint64_t> seed;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("--algo", options->algorithm,
                   "kmeans: one frame per cluster of similar-looking frames (default); uniform: "
                   "frames drawn at random")
        ->check(CLI::IsMember({"kmeans", "uniform"}));
    app.add_option("--num", options->frames,
                   "new frames per video (default: numframes2pick in config.yaml)")
        ->check(CLI::NonNegativeNumber);
    app.add_flag("--crop", options->crop,
                 "crop the frames to each video's crop box in config.yaml (video_sets)");
    app.add_option("--videos", options->videos,
                   "only these videos of the project (paths, file names or names without "
                   "extension)");
    app.add_option("--cluster-resize-width", options->cluster_resize_width,
                   "kmeans: shrink frames to this width before clustering (default 30)")
        ->check(CLI::PositiveNumber);
    app.add_flag("--cluster-color", options->cluster_color,
                 "kmeans: cluster colour images instead of grey ones");
    app.add_option(
        "--seed", options->seed,
        "random seed; the same seed picks the same frames (default: a new one, printed)");
    app.add_option("--threads", options->threads, "decoder threads (default: one per core)")
        ->check(CLI::NonNegativeNumber);
    app.footer(
        "Frames come from the start..stop fraction of each video (config.yaml) and are written as "
        "labeled-data/<video>/img<frame>.png, as DeepLabCut does. Frames already there (images or "
        "labeled rows) are never overwritten or picked again: running it twice gives twice the "
        "frames. Prints the paths of the new frames.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      pipeline::ExtractFramesOptions extract;
      extract.selection = options->algorithm == "uniform" ? pipeline::FrameSelection::uniform
                                                          : pipeline::FrameSelection::kmeans;
      extract.frames = options->frames;
      extract.crop = options->crop;
      extract.videos = options->videos;
      extract.cluster_resize_width = options->cluster_resize_width;
      extract.cluster_color = options->cluster_color;
      extract.threads = options->threads;
      extract.seed = options->seed ? *options->seed : std::random_device{}();
      if (!options->seed) {
        console::info("random seed {} (pass --seed {} to pick the same frames again)", extract.seed,
                      extract.seed);
      }
      const auto results = pipeline::extract_frames(config, extract);
      std::size_t total = 0;
      for (const auto& video : results) {
        for (const std::int64_t index : video.frames) {
          std::cout
              << (video.folder / projects::frame_image_name(index, video.frame_count)).string()
              << '\n';
        }
        total += video.frames.size();
        console::info("labeled-data/{}: {} new frame{}", video.stem, video.frames.size(),
                      video.frames.size() == 1 ? "" : "s");
      }
      console::info("extracted {} frame{} from {} video{}; next: label them", total,
                    total == 1 ? "" : "s", results.size(), results.size() == 1 ? "" : "s");
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
