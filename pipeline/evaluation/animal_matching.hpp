// The animals a multi-animal network found in a labeled image, matched to the labeled animals so
// that their keypoints can be compared slot by slot (dataset.hpp's slots: individual i's bodypart
// j). The match minimizes the total mean distance over the bodyparts both animals have, each
// labeled animal taking at most one predicted animal; unique bodyparts come from the `single`
// assembly. Not the errors themselves (errors.hpp) and not COCO's keypoint metrics.
#pragma once

#include <filesystem>
#include <vector>

#include "pipeline/assembly/assemble.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/pose/animal_predictor.hpp"

namespace labpose::pipeline {

/// `predicted`'s keypoints in the slots of `image` (a multi-animal dataset's): the keypoints of
/// the animal matched to individual i in its slots, NaN (likelihood 0) where none was matched.
std::vector<KeypointPrediction> matched_slots(const Dataset& dataset, const LabeledImage& image,
                                              const Assemblies& predicted);

/// For each labeled individual (dataset.individuals without "single") the index of the
/// predicted animal matched to it, or -1.
std::vector<int> match_animals(const Dataset& dataset, const LabeledImage& image,
                               const std::vector<Assembly>& animals);

/// matched_slots() of dataset.images[indices[k]] (full images under `project`).
std::vector<std::vector<KeypointPrediction>> predict_animal_slots(
    AnimalPredictor& predictor, const Dataset& dataset, const std::vector<std::size_t>& indices,
    const std::filesystem::path& project);

}  // namespace labpose::pipeline
