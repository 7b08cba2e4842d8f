// labpose merge <config> [--force] [--iteration K]: DeepLabCut's merge_datasets.
#include <fmt/core.h>

#include "core/console.hpp"
#include "pipeline/analysis/outliers.hpp"
#include "tools/labpose/command.hpp"
#include "tools/labpose/config_loading.hpp"

namespace labpose::tools {

Command merge_command() {
  Command command;
  command.name = "merge";
  command.summary = "advance the project to the next iteration after refining labels";
  command.define = [](CLI::App& app) -> std::function<int()> {
    struct Options {
      std::string config;
      bool force = false;
      std::optional<int> iteration;
    };
    auto options = std::make_shared<Options>();
    app.add_option("config", options->config, "the project's config.yaml")->required();
    app.add_flag("--force", options->force,
                 "go on even when outlier frames of this iteration have no labels (they are then "
                 "left out of the training set)");
    app.add_option("--iteration", options->iteration,
                   "set this iteration instead of the next one (DeepLabCut's forceiterate)")
        ->check(CLI::Range(0, 100000));
    app.footer(
        "Checks that every frame extract-outliers added in this iteration "
        "(machinelabels-iter<K>.h5) "
        "has labels in CollectedData_<scorer>, then sets iteration: K+1 in config.yaml, so that "
        "create-dataset and train write iteration-<K+1> folders. Everything else in the project is "
        "left as it is.");
    return [options]() {
      projects::ProjectConfig config = load_project_config(options->config);
      const pipeline::IterationMerge merge =
          pipeline::merge_labeled_iteration(config, options->force, options->iteration);
      if (!merge.unreviewed.empty()) {
        console::warn("{} outlier frame{} without labels left out (--force)",
                      merge.unreviewed.size(), merge.unreviewed.size() == 1 ? "" : "s");
      }
      console::info("iteration {} -> {} in {}; next: labpose create-dataset {}", merge.previous,
                    merge.next, config.file().string(), options->config);
      return 0;
    };
  };
  return command;
}

}  // namespace labpose::tools
