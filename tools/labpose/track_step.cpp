// The shared command line of track and stitch.
#include "tools/labpose/track_step.hpp"

#include <fmt/core.h>

#include <iostream>
#include <tuple>

#include "core/error.hpp"
#include "pipeline/analysis/video_list.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {

void TrackStepCli::add_to(CLI::App& app, const std::string& reads) {
  app.add_option("config", config, "the project's config.yaml")->required();
  app.add_option("videos", videos, "the analyzed videos, or folders of videos")->required();
  model.add_to(app, "whose analysis to read (the scorer in the file names)");
  app.add_option("--dest", dest,
                 "where the analysis files are, and where to write (default: beside each video)");
  app.add_option("--tracker", tracker,
                 "ellipse (default: the _el files), box (_bx) or identity (_id, a network trained "
                 "with identity: true): the tracker whose " +
                     reads);
  app.add_flag("--overwrite", step.analyze.overwrite, "make the files again where they exist");
}

int TrackStepCli::run(const std::function<std::vector<pipeline::TrackStepResult>(
                          const projects::ProjectConfig&, const std::vector<std::filesystem::path>&,
                          const pipeline::TrackStepOptions&)>& run_step) {
  const projects::ProjectConfig project = load_project_config(config);
  pipeline::TrackStepOptions options = step;
  options.tracker = parse_tracker(tracker);
  std::tie(options.analyze.shuffle, options.analyze.training_fraction) =
      model.chosen_shuffle(project);
  std::tie(options.analyze.snapshot_index, options.analyze.best_snapshot) = model.snapshot_choice();
  if (!dest.empty()) options.analyze.dest = dest;
  const std::vector<std::filesystem::path> inputs(videos.begin(), videos.end());
  for (const auto& result : run_step(project, pipeline::videos_to_analyze(inputs, 0, 1), options))
    std::cout << result.output.string() << '\n';
  return 0;
}

}  // namespace labpose::tools
