// The files of a training-set folder that DeepLabCut reads (reference/dlc-format.md §4.2):
// Documentation_data-<Task>_<P>shuffle<S>.pickle and metadata.yaml, DeepLabCut 3's registry of
// shuffles. Not the choice of splits (create_dataset.hpp) and not DeepLabCut's .mat.
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
std::string documentation_pickle(const Dataset& dataset, const std::vector<std::size_t>& train,
                                 const std::vector<std::size_t>& test, double fraction);

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
