// The files of a training-set folder that DeepLabCut reads (reference/dlc-format.md §4.2):
// Documentation_data-<Task>_<P>shuffle<S>.pickle, a multi-animal project's training set
// <Task>_<scorer><P>shuffle<S>.pickle, and metadata.yaml, DeepLabCut 3's registry of shuffles. Not
// the choice of splits (create_dataset.hpp) and not DeepLabCut's .mat.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/dataset/dataset.hpp"

namespace labpose::pipeline {

/// DeepLabCut's Documentation pickle: [data, trainIndices, testIndices, trainFraction] with data =
/// one dict {image: (parts...), size: (3, h, w), joints: [[j, x, y], ...]} per training image that
/// keeps a point; x and y truncated to integers (numpy's astype(int)) and kept only when strictly
/// inside the image, as DeepLabCut's TensorFlow training set. Indices into dataset.images.
/// In a multi-animal project, data is multi_animal_training_data(train) instead.
std::string documentation_pickle(const Dataset& dataset, const std::vector<std::size_t>& train,
                                 const std::vector<std::size_t>& test, double fraction);

/// DeepLabCut's multi-animal training data (format_multianimal_training_data), the list its
/// training set pickle holds: per image of `indices` that keeps a point, {"image": (parts...),
/// "size": int64 array [3, h, w], "joints": {n: float32 array (k, 3) of [bodypart, x, y]}}, where n
/// counts the individuals (single's unique bodyparts last, numbered after the per-animal ones),
/// the coordinates are rounded to 2 decimals in float32 as numpy rounds them, and points not
/// strictly inside the image are left out.
std::string multi_animal_training_pickle(const Dataset& dataset,
                                         const std::vector<std::size_t>& indices);

/// A multi-animal shuffle's test/inference_cfg.yaml, DeepLabCut's assembly and tracking settings:
/// its template's values, with minimalnumberofconnections = multi-animal bodyparts / 2,
/// topktoretain = the individuals and withid = config.yaml's identity, as
/// create_multianimaltraining_dataset sets them.
std::string inference_config_text(std::size_t multi_bodyparts, std::size_t individuals,
                                  bool identity);

/// A shuffle to enter in metadata.yaml.
struct RegisteredShuffle {
  std::string name;  // "<Task><date>-trainset<P>shuffle<S>"
  double training_fraction = 0.0;
  int shuffle = 1;
  std::vector<std::size_t> train, test;  // equal splits share a split number
  // DeepLabCut 3 refuses any engine name but "pytorch" and "tensorflow" in metadata.yaml; its
  // PyTorch engine reads the split from the Documentation pickle as labpose writes it.
  std::string engine = "pytorch";
};

/// The text of `file` (metadata.yaml, which may not exist yet) with `shuffles` entered: entries of
/// those names are replaced, every other entry (DeepLabCut's own) is kept as it is; sorted by
/// training fraction and shuffle, with DeepLabCut's three header lines. Throws when the existing
/// file is not a registry of shuffles.
std::string updated_shuffle_registry(const std::filesystem::path& file,
                                     const std::vector<RegisteredShuffle>& shuffles);

}  // namespace labpose::pipeline
