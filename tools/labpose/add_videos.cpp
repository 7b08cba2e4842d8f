// labpose add-videos <config> <video|folder>... [--copy-videos]
#include <fmt/core.h>
#include <fmt/ranges.h>

#include "core/console.hpp"
#include "projects/config.hpp"
#include "projects/project.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"
#include "tools/labpose/video_inputs.hpp"

namespace labpose::tools {

Command add_videos_command() {
  Command command;
  command.name = "add-videos";
  command.summary = "add videos to a project";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config;
      std::vector<std::string> videos;
      bool copy_videos = false;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_option("videos", options->videos, "video files or folders of videos")->required();
    app.add_flag("--copy-videos", options->copy_videos,
                 "copy the videos into the project instead of linking them");
    return [options]() {
      projects::ProjectConfig config = load_project_config(options->config);
      const auto videos = probe_video_arguments(options->videos);
      const auto result = projects::add_videos(config, videos, options->copy_videos);
      if (!result.skipped.empty()) {
        console::warn("already in the project, skipped: {}", fmt::join(result.skipped, ", "));
      }
      if (result.added.empty()) {
        console::info("no new videos added");
      } else {
        console::info("added {} video{} to {}: {}", result.added.size(),
                      result.added.size() == 1 ? "" : "s", config.file().string(),
                      fmt::join(result.added, ", "));
      }
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
