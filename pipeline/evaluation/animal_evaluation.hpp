// The multi-animal half of `labpose evaluate`: the PAF graph chosen from the network's detections
// on every labeled image (graph_selection.hpp), the animals assembled through it, and their
// scores on the training and test images: COCO's mAP and mAR (keypoint_similarity.hpp) and
// DeepLabCut's purity and misses (assembly_purity.hpp). Not the keypoint errors, which come from
// the matched slots (animal_matching.hpp, errors.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "pipeline/assembly/assemble.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/evaluation/evaluate.hpp"
#include "pipeline/evaluation/graph_selection.hpp"
#include "pipeline/pose/animal_predictor.hpp"

namespace labpose::pipeline {

/// Image `image`'s labeled animals (dataset.animals() of them) over the multi-animal bodyparts.
LabeledAnimals labeled_animals_of(const Dataset& dataset, const LabeledImage& image);

struct AssembledImages {
  std::vector<Assemblies> animals;  // per image of the dataset
  std::vector<int> paf_best;        // the edges they were linked through
};

/// Chooses the graph from `detections` (one per image of `dataset`, over the model's whole
/// graph; `train` indexes the training images), makes `predictor` link through it, and
/// assembles every image.
AssembledImages assemble_through_best_graph(AnimalPredictor& predictor,
                                            const std::vector<ImageDetections>& detections,
                                            const Dataset& dataset,
                                            const std::vector<std::size_t>& train,
                                            const PafGraph& graph,
                                            const AssemblySettings& settings);

/// mAP, mAR, purity and misses on the training and test images.
AssemblyEvaluation evaluate_assemblies(const Dataset& dataset,
                                       const std::vector<std::size_t>& train,
                                       const std::vector<std::size_t>& test,
                                       const AssembledImages& assembled, std::size_t graph_edges);

}  // namespace labpose::pipeline
