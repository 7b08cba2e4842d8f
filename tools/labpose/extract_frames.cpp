// labpose extract-frames <config> [--algo kmeans|uniform] [--num N] [--crop] [--videos V...]
//   [--cluster-resize-width 30] [--cluster-color] [--seed S] [--threads N]
#include <fmt/core.h>

#include <iostream>

#include "core/console.hpp"
#include "pipeline/frames/extract.hpp"
#include "projects/config.hpp"
#include "projects/layout.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/frame_options.hpp"

namespace labpose::tools {

Command extract_frames_command() {
  Command command;
  command.name = "extract-frames";
  command.summary = "extract frames to label from the project's videos (uniform or k-means)";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config;
      std::vector<std::string> videos;
      FrameOptions frames;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    options->frames.add_to(app, "--algo");
    app.add_option("--videos", options->videos,
                   "only these videos of the project (paths, file names or names without "
                   "extension)");
    app.footer(
        "Frames come from the start..stop fraction of each video (config.yaml) and are written as "
        "labeled-data/<video>/img<frame>.png, as DeepLabCut does. Frames already there (images or "
        "labeled rows) are never overwritten or picked again: running it twice gives twice the "
        "frames. Prints the paths of the new frames.");
    return [options]() {
      const projects::ProjectConfig config = load_project_config(options->config);
      pipeline::ExtractFramesOptions extract = options->frames.resolve();
      extract.videos = options->videos;
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
