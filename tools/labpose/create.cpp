// labpose create <Task> <scorer> <video|folder>... [--dir D] [--copy-videos]
//   [--multi-animal [--individuals a,b,c]]
#include <fmt/core.h>

#include <iostream>

#include "core/console.hpp"
#include "projects/layout.hpp"
#include "projects/project.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/video_inputs.hpp"

namespace labpose::tools {

Command create_command() {
  Command command;
  command.name = "create";
  command.summary = "create a project (DeepLabCut layout) from videos";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string task, scorer, dir = ".";
      std::vector<std::string> videos, individuals;
      bool copy_videos = false, multi_animal = false;
    };
    auto options = std::make_shared<Options>();
    app.add_option("task", options->task, "the task (experiment) name, e.g. openfield")->required();
    app.add_option("scorer", options->scorer, "who labels, e.g. your name")->required();
    app.add_option("videos", options->videos, "video files or folders of videos")->required();
    app.add_option("--dir", options->dir, "where to create the project folder (default: here)");
    app.add_flag("--copy-videos", options->copy_videos,
                 "copy the videos into the project instead of linking them");
    app.add_flag("--multi-animal", options->multi_animal,
                 "a multi-animal project (several animals per video), as DeepLabCut makes one");
    app.add_option("--individuals", options->individuals,
                   "with --multi-animal: the animals' names, e.g. mouse1,mouse2 (default "
                   "individual1,individual2,individual3)")
        ->delimiter(',');
    app.footer(
        "Creates <task>-<scorer>-<YYYY-MM-DD>/ with config.yaml, videos/, labeled-data/<video>/ "
        "and "
        "training-datasets/, as DeepLabCut does, and prints the path of config.yaml.");
    return [options]() {
      projects::CreateProjectOptions create;
      create.task = options->task;
      create.scorer = options->scorer;
      projects::check_name("task name", create.task);
      projects::check_name("scorer name", create.scorer);
      create.videos = probe_video_arguments(options->videos);
      create.working_dir = options->dir;
      create.copy_videos = options->copy_videos;
      create.multi_animal = options->multi_animal;
      create.individuals = options->individuals;
      create.date = projects::today();
      const auto config = projects::create_project(create);
      console::info(
          "created the {}project {} with {} video{}; next: edit {} in config.yaml, then "
          "extract frames",
          create.multi_animal ? "multi-animal " : "", config.parent_path().string(),
          create.videos.size(), create.videos.size() == 1 ? "" : "s",
          create.multi_animal ? "multianimalbodyparts (and uniquebodyparts)" : "bodyparts");
      std::cout << config.string() << '\n';
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
