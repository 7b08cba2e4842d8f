// promoted.yaml: four keys, read with the checked YAML reader.
#include "projects/promoted_model.hpp"

#include <fmt/core.h>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "projects/yaml_reader.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::projects {
namespace fs = std::filesystem;

fs::path promoted_model_file(const ProjectConfig& config) {
  return config.project_dir() / "labpose-models" /
         fmt::format("iteration-{}", config.values().iteration) / "promoted.yaml";
}

std::optional<PromotedModel> read_promoted_model(const ProjectConfig& config) {
  const fs::path file = promoted_model_file(config);
  std::error_code error;
  if (!fs::exists(file, error)) return std::nullopt;
  check_yaml_size(fs::file_size(file, error), file, "promoted.yaml");
  const YAML::Node root = parse_yaml(read_file(file), file, "promoted.yaml");
  if (!root.IsMap()) {
    throw Error(fmt::format("{} must be a mapping of `key: value` lines", file.string()),
                "delete it to use shuffle 1 by default, or promote a sweep's trial again");
  }
  const YamlMapReader reader(file, root);
  PromotedModel model;
  model.shuffle = reader.optional_int("shuffle", 1, 1000000).value_or(0);
  if (model.shuffle == 0) reader.fail("shuffle", root, "shuffle is missing");
  model.training_fraction =
      reader.optional_number("training_fraction", 0.01, 1.0).value_or(model.training_fraction);
  model.sweep = reader.text("sweep", false);
  model.trial = reader.optional_int("trial", 0, 1000000).value_or(0);
  return model;
}

void write_promoted_model(const ProjectConfig& config, const PromotedModel& model) {
  write_file_atomically(
      promoted_model_file(config),
      fmt::format("# The project's model for evaluate, analyze, filter, labeled-video, "
                  "plot-trajectories\n# and extract-outliers when no --shuffle is given (labpose "
                  "sweep --promote wrote it).\nshuffle: {}\ntraining_fraction: {}\nsweep: {}\n"
                  "trial: {}\n",
                  model.shuffle, yaml_text::float_text(model.training_fraction),
                  yaml_text::quote_string(model.sweep), model.trial));
}

std::pair<int, std::optional<double>> default_model_shuffle(const ProjectConfig& config,
                                                            std::optional<int> shuffle,
                                                            std::optional<double> fraction) {
  if (shuffle) return {*shuffle, fraction};
  const auto promoted = read_promoted_model(config);
  if (!promoted) return {1, fraction};
  console::info(
      "shuffle {} (trainset {:g}), the model promoted from sweep {} (trial {}); "
      "--shuffle picks another",
      promoted->shuffle, promoted->training_fraction, promoted->sweep, promoted->trial);
  return {promoted->shuffle, fraction ? fraction : promoted->training_fraction};
}

}  // namespace labpose::projects
