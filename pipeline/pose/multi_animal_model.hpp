// What a multi-animal network's outputs mean, as its snapshot keeps it: the individuals, the unique
// bodyparts, the part-affinity graph and the identity channels. The network's heads follow from
// it (nets::MultiAnimalHeads). Not the targets (training/multi_targets.hpp) and not assembly.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nets/models/models.hpp"
#include "pipeline/assembly/graph.hpp"

namespace labpose::pipeline {

struct MultiAnimalModel {
  std::vector<std::string> individuals;       // config.yaml's, without "single"
  std::vector<std::string> unique_bodyparts;  // the last of the model's bodyparts
  PafGraph graph;                             // over the multi-animal bodyparts
  int identity_channels = 0;                  // pose_cfg num_idchannel

  nets::MultiAnimalHeads heads() const {
    return {identity_channels, static_cast<int>(graph.size())};
  }
  bool operator==(const MultiAnimalModel&) const = default;
};

/// The snapshot metadata entries of `model` (JSON lists), added to `entries`.
void add_multi_animal_entries(const MultiAnimalModel& model,
                              std::map<std::string, std::string>& entries);
/// The model described by snapshot metadata; nullopt for a single-animal snapshot. Throws
/// std::exception on damaged entries (the caller names the file). `bodyparts`: the model's
/// bodyparts (multi-animal ones, then the unique ones), for checking the graph.
std::optional<MultiAnimalModel> multi_animal_model_from(
    const std::map<std::string, std::string>& entries, std::size_t bodyparts);

}  // namespace labpose::pipeline
