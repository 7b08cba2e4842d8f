// Graph choice, assembly and animal scores of a multi-animal evaluation.
#include "pipeline/evaluation/animal_evaluation.hpp"

#include <algorithm>
#include <cmath>

#include "core/console.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

// COCO's input: the animals of dataset.images[indices[k]] with a labeled keypoint, beside the
// animals assembled there.
std::vector<ImageAnimals> labeled_and_predicted(const Dataset& dataset,
                                                const std::vector<std::size_t>& indices,
                                                const std::vector<Assemblies>& predicted) {
  std::vector<ImageAnimals> images;
  for (const std::size_t index : indices) {
    ImageAnimals image;
    image.predicted = predicted[index].animals;
    for (auto& animal : labeled_animals_of(dataset, dataset.images[index])) {
      const bool any = std::any_of(animal.begin(), animal.end(),
                                   [](const KeypointPrediction& p) { return !std::isnan(p.x); });
      if (any) image.labeled.push_back(std::move(animal));
    }
    images.push_back(std::move(image));
  }
  return images;
}

PurityScores purity_of(const Dataset& dataset, const std::vector<std::size_t>& indices,
                       const std::vector<Assemblies>& predicted) {
  std::vector<ImagePurity> images;
  for (const std::size_t index : indices) {
    images.push_back(
        image_purity(labeled_animals_of(dataset, dataset.images[index]), predicted[index].animals));
  }
  return mean_purity(images);
}

}  // namespace

LabeledAnimals labeled_animals_of(const Dataset& dataset, const LabeledImage& image) {
  const std::size_t bodyparts = dataset.bodyparts.size();
  LabeledAnimals animals(dataset.animals());
  for (std::size_t i = 0; i < animals.size(); ++i) {
    for (std::size_t j = 0; j < dataset.multi_bodyparts; ++j)
      animals[i].push_back({image.x[i * bodyparts + j], image.y[i * bodyparts + j], 1.0});
  }
  return animals;
}

std::size_t best_radius(const std::vector<int>& radii, const std::vector<double>& scores) {
  LABPOSE_ASSERT(!radii.empty() && radii.size() == scores.size());
  const auto standard = std::find(radii.begin(), radii.end(), CandidateSettings{}.nms_radius);
  std::size_t chosen =
      standard != radii.end() ? static_cast<std::size_t>(standard - radii.begin()) : 0;
  for (std::size_t k = 0; k < scores.size(); ++k) {
    if (!std::isnan(scores[k]) && (std::isnan(scores[chosen]) || scores[k] > scores[chosen]))
      chosen = k;
  }
  return chosen;
}

AssembledImages assemble_through_best_graph(AnimalPredictor& predictor,
                                            const std::vector<RadiusDetections>& by_radius,
                                            const Dataset& dataset,
                                            const std::vector<std::size_t>& train,
                                            const PafGraph& graph,
                                            const AssemblySettings& settings) {
  std::vector<LabeledAnimals> labeled;
  for (const LabeledImage& image : dataset.images)
    labeled.push_back(labeled_animals_of(dataset, image));
  std::vector<GraphSelection> selections;
  std::vector<int> radii;
  std::vector<double> scores;
  for (const RadiusDetections& radius : by_radius) {
    selections.push_back(select_graph(radius.images, labeled, train, graph,
                                      static_cast<int>(dataset.multi_bodyparts), settings));
    const GraphSelection& selection = selections.back();
    radii.push_back(radius.nms_radius);
    scores.push_back(selection.trials.empty()
                         ? std::nan("")
                         : assembly_score(selection.trials[selection.best].scores));
  }
  const std::size_t chosen = best_radius(radii, scores);
  AssembledImages assembled;
  assembled.nms_radius = radii[chosen];
  assembled.nms_radius_chosen = radii.size() > 1;
  if (assembled.nms_radius_chosen) {
    for (std::size_t k = 0; k < radii.size(); ++k) {
      const GraphSelection& selection = selections[k];
      const PurityScores best =
          selection.trials.empty() ? PurityScores{} : selection.trials[selection.best].scores;
      console::info(
          "nmsradius {}: (1 - miss) x purity {:.3f} through its best PAF graph (purity "
          "{:.3f}, miss {:.3f}){}",
          radii[k], scores[k], best.purity, best.miss, k == chosen ? " (chosen)" : "");
    }
  }
  const GraphSelection& selection = selections[chosen];
  const std::vector<ImageDetections>& detections = by_radius[chosen].images;
  if (!selection.trials.empty()) assembled.paf_best = selection.trials[selection.best].edges;
  for (const GraphTrial& trial : selection.trials) {
    console::info("PAF graph of {} edges: purity {:.3f}, miss {:.3f}{}", trial.edges.size(),
                  trial.scores.purity, trial.scores.miss,
                  trial.edges == assembled.paf_best ? " (chosen)" : "");
  }
  predictor.use_edges(assembled.paf_best);
  for (const ImageDetections& image : detections)
    assembled.animals.push_back(predictor.assemble(image));
  return assembled;
}

AssemblyEvaluation evaluate_assemblies(const Dataset& dataset,
                                       const std::vector<std::size_t>& train,
                                       const std::vector<std::size_t>& test,
                                       const AssembledImages& assembled, std::size_t graph_edges) {
  AssemblyEvaluation evaluation;
  evaluation.train = score_assemblies(labeled_and_predicted(dataset, train, assembled.animals));
  evaluation.test = score_assemblies(labeled_and_predicted(dataset, test, assembled.animals));
  evaluation.train_purity = purity_of(dataset, train, assembled.animals);
  evaluation.test_purity = purity_of(dataset, test, assembled.animals);
  evaluation.paf_best = assembled.paf_best;
  evaluation.graph_edges = graph_edges;
  evaluation.nms_radius = assembled.nms_radius;
  evaluation.nms_radius_chosen = assembled.nms_radius_chosen;
  return evaluation;
}

}  // namespace labpose::pipeline
