// What labpose track and labpose stitch share on their command lines: the project, the videos,
// the model (whose scorer names the files), --dest, --tracker and --overwrite. Not the steps
// themselves (pipeline/analysis/ multi_animal_tracking.hpp).
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "pipeline/analysis/multi_animal_tracking.hpp"
#include "tools/labpose/model_options.hpp"

namespace labpose::tools {

/// What track or stitch was given on its command line.
struct TrackStepCli {
  std::string config, dest, tracker;
  std::vector<std::string> videos;
  ModelOptions model;
  pipeline::TrackStepOptions step;

  /// Adds the shared arguments and options to `app`; `reads` names the file the step reads.
  void add_to(CLI::App& app, const std::string& reads);
  /// Runs `step` on the videos with the parsed options and prints each file written or found.
  int run(const std::function<std::vector<pipeline::TrackStepResult>(
              const projects::ProjectConfig&, const std::vector<std::filesystem::path>&,
              const pipeline::TrackStepOptions&)>& run_step);
};

}  // namespace labpose::tools
