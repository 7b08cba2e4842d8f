// The part-affinity graph a multi-animal model assembles with, chosen from its predictions on the
// labeled images as DeepLabCut's evaluate does (cross_validate_paf_graphs in deeplabcut/
// pose_estimation_tensorflow/lib/crossvalutils.py), so that a model trained on every pair of
// bodyparts links animals through the edges that tell animals apart best:
// 1. per edge, on the training images: the affinities of candidate pairs that belong to one
//    labeled animal (within) and those of pairs that do not (between), the candidates paired with
//    the labels by closest_neighbors; the edge's separability is the area under the ROC curve of
//    the two histograms (101 bin edges on [0, 1]). Edges with no within pair are left out.
// 2. the maximum spanning tree of the separabilities (Kruskal) is the smallest graph; up to
//    n_graphs - 1 larger ones add the other edges best first, at sizes numpy.linspace spaces out.
// 3. every graph assembles every image (train and test); the one with the best (1 - miss) x purity
//    over the images with two or more labeled animals (assembly_purity.hpp) wins. It is stored as
//    `paf_best` in test/pose_cfg.yaml, which later assembly reads.
// Differences: edges whose separability cannot be computed (no between pair) come last instead of
// first; a graph whose score is NaN (it assembled no animal) never wins over one with a score,
// where DeepLabCut's numpy.argmax takes the first NaN; equal separabilities may be ordered
// otherwise; assembly is labpose's (assemble.hpp, no add_discarded).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "pipeline/assembly/affinity.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/assembly/candidates.hpp"
#include "pipeline/assembly/graph.hpp"
#include "pipeline/evaluation/assembly_purity.hpp"

namespace labpose::pipeline {

/// DeepLabCut's number of graphs tried.
inline constexpr int kGraphsTried = 10;

/// One image's labeled animals over the multi-animal bodyparts (NaN where unlabeled).
using LabeledAnimals = std::vector<std::vector<KeypointPrediction>>;

/// Step 1 for each edge of `graph`: its separability on the images `train` indexes; nullopt where
/// no within pair was seen, NaN where no between pair was.
std::vector<std::optional<double>> edge_separability(const std::vector<ImageDetections>& images,
                                                     const std::vector<LabeledAnimals>& labeled,
                                                     const std::vector<std::size_t>& train,
                                                     const PafGraph& graph);

/// Step 2: the graphs to try (edge indices into `graph`), smallest first.
std::vector<std::vector<int>> graphs_to_try(const PafGraph& graph,
                                            const std::vector<std::optional<double>>& separability,
                                            int graphs = kGraphsTried);

struct GraphTrial {
  std::vector<int> edges;
  PurityScores scores;
};

struct GraphSelection {
  std::vector<GraphTrial> trials;  // smallest graph first
  std::size_t best = 0;            // the chosen trial
};

/// The score step 3 compares: (1 - miss) x purity; NaN when nothing was assembled.
double assembly_score(const PurityScores& scores);

/// Step 3's choice among `trials` (at least one): the first with the best (1 - miss) x purity;
/// a NaN score (no animal assembled) loses to any number; the first trial when every score is NaN.
std::size_t best_trial(const std::vector<GraphTrial>& trials);

/// Steps 1 to 3. `labeled` and `images` are indexed alike; `multi_bodyparts` and `settings` as
/// for assemble(). Throws Error when the inputs disagree.
GraphSelection select_graph(const std::vector<ImageDetections>& images,
                            const std::vector<LabeledAnimals>& labeled,
                            const std::vector<std::size_t>& train, const PafGraph& graph,
                            int multi_bodyparts, const AssemblySettings& settings);

}  // namespace labpose::pipeline
