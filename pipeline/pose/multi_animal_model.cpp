// A multi-animal model in snapshot metadata: four JSON entries beside the single-animal ones.
#include "pipeline/pose/multi_animal_model.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace labpose::pipeline {

void add_multi_animal_entries(const MultiAnimalModel& model,
                              std::map<std::string, std::string>& entries) {
  nlohmann::json graph = nlohmann::json::array();
  for (const GraphEdge& edge : model.graph) graph.push_back({edge.source, edge.target});
  entries["individuals"] = nlohmann::json(model.individuals).dump();
  entries["unique_bodyparts"] = nlohmann::json(model.unique_bodyparts).dump();
  entries["paf_graph"] = graph.dump();
  entries["identity_channels"] = std::to_string(model.identity_channels);
}

std::optional<MultiAnimalModel> multi_animal_model_from(
    const std::map<std::string, std::string>& entries, std::size_t bodyparts) {
  const auto individuals = entries.find("individuals");
  if (individuals == entries.end()) return std::nullopt;
  MultiAnimalModel model;
  model.individuals = nlohmann::json::parse(individuals->second).get<std::vector<std::string>>();
  model.unique_bodyparts =
      nlohmann::json::parse(entries.at("unique_bodyparts")).get<std::vector<std::string>>();
  if (model.individuals.empty() || model.unique_bodyparts.size() >= bodyparts)
    throw std::runtime_error("the individuals or unique bodyparts do not fit the bodyparts");
  for (const auto& edge : nlohmann::json::parse(entries.at("paf_graph"))) {
    model.graph.push_back({edge.at(0).get<int>(), edge.at(1).get<int>()});
  }
  check_graph(model.graph, static_cast<int>(bodyparts - model.unique_bodyparts.size()));
  model.identity_channels = std::stoi(entries.at("identity_channels"));
  if (model.identity_channels < 0) throw std::runtime_error("negative identity_channels");
  return model;
}

}  // namespace labpose::pipeline
