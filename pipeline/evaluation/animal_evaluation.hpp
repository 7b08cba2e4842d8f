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

/// The detections of every image of the dataset with one nmsradius.
struct RadiusDetections {
  int nms_radius = 5;
  std::vector<ImageDetections> images;
};

struct AssembledImages {
  std::vector<Assemblies> animals;  // per image of the dataset
  std::vector<int> paf_best;        // the edges they were linked through
  int nms_radius = 5;               // the radius of the candidates they were assembled from
  bool nms_radius_chosen = false;   // chosen among several radii (evaluate writes it)
};

/// For each radius's detections (over the model's whole graph; `train` indexes the training
/// images), the graph (graph_selection.hpp); then the radius whose graph scores best by
/// assembly_score, DeepLabCut's 5 unless another scores higher (or the first of `by_radius`
/// without 5 among them). Makes `predictor` link through that graph and assembles every image
/// from that radius's detections.
AssembledImages assemble_through_best_graph(AnimalPredictor& predictor,
                                            const std::vector<RadiusDetections>& by_radius,
                                            const Dataset& dataset,
                                            const std::vector<std::size_t>& train,
                                            const PafGraph& graph,
                                            const AssemblySettings& settings);

/// The index into `scores` (one per radius of `radii`) of the radius assemble_through_best_graph
/// takes: the default 5 unless another scores strictly higher; NaN never wins over a number.
std::size_t best_radius(const std::vector<int>& radii, const std::vector<double>& scores);

/// mAP, mAR, purity and misses on the training and test images.
AssemblyEvaluation evaluate_assemblies(const Dataset& dataset,
                                       const std::vector<std::size_t>& train,
                                       const std::vector<std::size_t>& test,
                                       const AssembledImages& assembled, std::size_t graph_edges);

}  // namespace labpose::pipeline
