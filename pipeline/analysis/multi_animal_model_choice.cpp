// The snapshot, graph and settings of a multi-animal analysis.
#include "pipeline/analysis/multi_animal_model_choice.hpp"

#include <fmt/core.h>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/pose/animal_predictor.hpp"
#include "pipeline/pose/candidate_keys.hpp"
#include "pipeline/pose/paf_best.hpp"
#include "projects/layout.hpp"
#include "projects/yaml_reader.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// The edges of paf_best in test/pose_cfg.yaml, or every edge of the graph.
std::vector<int> chosen_edges(const fs::path& test_config, const PafGraph& graph) {
  std::vector<int> every(graph.size());
  for (std::size_t e = 0; e < graph.size(); ++e) every[e] = static_cast<int>(e);
  std::error_code error;
  if (!fs::exists(test_config, error)) {
    console::warn("{} does not exist: linking animals through every edge of the graph",
                  test_config.string());
    return every;
  }
  const std::string hint =
      "evaluate the shuffle again (labpose evaluate) to choose the graph afresh, or delete the "
      "paf_best line to link through every edge";
  std::optional<std::vector<int>> best;
  try {
    best = read_paf_best(test_config, static_cast<int>(graph.size()));
  } catch (const Error& unusable) {
    throw Error(
        fmt::format("paf_best (the edges animals are linked through) in {}", unusable.what()),
        hint);
  }
  if (!best) {
    console::info(
        "{} has no paf_best: linking animals through all {} edges (labpose evaluate chooses "
        "the best ones)",
        test_config.string(), graph.size());
    return every;
  }
  if (best->empty() && !graph.empty()) {
    throw Error(
        fmt::format("{}: paf_best is empty, so no animal could be assembled", test_config.string()),
        hint);
  }
  return *best;
}

}  // namespace

void read_inference_settings(const fs::path& file, AnimalAnalysisModel& model) {
  const YAML::Node root = projects::parse_yaml(read_file(file), file, "inference_cfg.yaml");
  const projects::YamlMapReader reader(file, root);
  AssemblySettings& assembly = model.assembly.assembly;
  assembly.pcutoff = reader.optional_number("pcutoff", 0.0, 1.0).value_or(assembly.pcutoff);
  assembly.min_affinity =
      reader.optional_number("pafthreshold", 0.0, 1.0).value_or(assembly.min_affinity);
  assembly.min_links =
      reader.optional_int("minimalnumberofconnections", 0, 10000).value_or(assembly.min_links);
  assembly.max_individuals =
      reader.optional_int("topktoretain", 1, 10000).value_or(assembly.max_individuals);
  TrackerSettings& tracker = model.tracker;
  tracker.max_age = reader.optional_int("max_age", 1, 100'000'000).value_or(tracker.max_age);
  tracker.min_hits = reader.optional_int("min_hits", 0, 100'000'000).value_or(tracker.min_hits);
  tracker.iou_threshold =
      reader.optional_number("iou_threshold", 0.0, 1.0).value_or(tracker.iou_threshold);
  tracker.bounding_box_slack = reader.optional_number("boundingboxslack", 0.0, 100000.0)
                                   .value_or(tracker.bounding_box_slack);
}

AnimalAnalysisModel find_animal_analysis_model(const projects::ProjectConfig& config,
                                               const AnalyzeOptions& options, TrackMethod tracker) {
  AnimalAnalysisModel chosen;
  chosen.model = find_shuffle_model(config, options.shuffle, options.training_fraction,
                                    options.snapshot_index, options.best_snapshot);
  chosen.snapshot = std::make_shared<const LoadedSnapshot>(read_snapshot(chosen.model.snapshot));
  const LoadedSnapshot& snapshot = *chosen.snapshot;
  if (!snapshot.metadata.multi_animal) {
    throw Error(fmt::format("{} is a single-animal network, but {} is a multi-animal project",
                            chosen.model.snapshot.string(), config.file().string()),
                "make the shuffle again for this project (labpose create-dataset) and train it");
  }
  chosen.animals = *snapshot.metadata.multi_animal;
  const projects::ConfigValues& values = config.values();
  chosen.individuals = values.individuals;
  const std::size_t unique = chosen.animals.unique_bodyparts.size();
  const auto& bodyparts = chosen.model.bodyparts;
  chosen.multi_bodyparts.assign(bodyparts.begin(), bodyparts.end() - static_cast<long>(unique));
  chosen.unique_bodyparts = chosen.animals.unique_bodyparts;
  if (chosen.individuals.empty()) {
    throw Error(fmt::format("{}: individuals is empty", config.file().string()),
                "list the animals' names under individuals, as the network was trained with");
  }
  const fs::path test_dir = projects::test_dir_beside(chosen.model.snapshot.parent_path());
  chosen.edges = chosen_edges(projects::pose_cfg_in(test_dir), chosen.animals.graph);

  chosen.assembly = project_assembly_settings(
      chosen.animals, DecodeSettings{chosen.model.stride, chosen.model.locref_stdev,
                                     chosen.model.location_refinement});
  read_candidate_keys(projects::pose_cfg_in(test_dir), chosen.assembly.candidates);
  chosen.assembly.assembly.max_individuals = static_cast<int>(chosen.individuals.size());
  chosen.assembly.assembly.min_links =
      project_min_links(static_cast<int>(chosen.multi_bodyparts.size()));
  chosen.tracker.method = tracker;
  const fs::path inference = projects::inference_cfg_in(test_dir);
  std::error_code error;
  if (fs::exists(inference, error)) {
    read_inference_settings(inference, chosen);
  } else {
    console::warn("{} does not exist: assembling and tracking with DeepLabCut's defaults",
                  inference.string());
  }
  check_tracker_settings(chosen.tracker);
  chosen.stitch.n_tracks = static_cast<int>(chosen.individuals.size());
  if (tracker == TrackMethod::identity && chosen.animals.identity_channels == 0) {
    throw UsageError(
        fmt::format("--tracker identity links animals by the votes of the network's identity "
                    "head, and {} has none (it was trained without identity: true in {})",
                    chosen.model.snapshot.filename().string(), config.file().string()),
        "use --tracker ellipse (the default) or --tracker box; or set identity: true in "
        "config.yaml, make the shuffle again (labpose create-dataset) and train it");
  }
  return chosen;
}

}  // namespace labpose::pipeline
