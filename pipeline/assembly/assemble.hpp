// Bottom-up assembly of animals from candidates and edge costs, after DeepLabCut's Assembler
// (deeplabcut/core/inferenceutils.py, `_assemble` with its defaults: no calibration, no
// identity_only, no temporal window, add_discarded and force_fusion off). Not tracking across
// frames; labpose's temporal prior for the frames of a video weakens the edge costs before
// assembly (temporal_prior.hpp).
//
// What labpose does, in DeepLabCut's order:
// 1. unique bodyparts: the best candidate of each, dropped at or below pcutoff, form `single`.
// 2. links, per graph edge: among the max_individuals most confident candidates of each end that
//    reach pcutoff, the optimal assignment by affinity (greedy: highest affinity first instead);
//    pairs below min_affinity dropped.
// 3. connected groups of links with as many candidates as there are bodyparts become animals
//    first; if that makes max_individuals animals, assembly ends there. Then, from the strongest
//    link whose ends are both free, an animal grows best-first along the strongest links that add
//    a bodypart it lacks; the next free link starts the next animal. A link between two members
//    (closing a cycle) adds its affinity and counts as a link.
// 4. when there are more animals than max_individuals, incomplete ones with no bodypart in common
//    are fused where an unused link joins them; then incomplete animals grow again.
// 5. animals with 1 to min_links - 1 links are dropped. Pose NMS, by total affinity: an animal
//    with max_overlap or more of its keypoints in the box shared with a better one is dropped. If
//    more than max_individuals remain, those with the most keypoints are kept (ties: NMS order).
//    With keep_partial (labpose's), the dropped animals then fill the places still free.
// Special cases as in DeepLabCut: one multi-animal bodypart makes every candidate at or above
// pcutoff its own animal; max_individuals = 1 takes the best candidate of each bodypart.
// Differences: ties between equal affinities may be broken in another order (SciPy's assignment,
// Python's set order), and the same-pair check treats edges as undirected.
#pragma once

#include <optional>
#include <vector>

#include "pipeline/assembly/affinity.hpp"
#include "pipeline/assembly/candidates.hpp"
#include "pipeline/assembly/graph.hpp"
#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

/// inference_cfg.yaml's `detectionthresholdsquare` as create_multianimaltraining_dataset writes it:
/// the weakest candidate assembly links.
inline constexpr double kProjectDetectionThreshold = 0.1;
/// inference_cfg.yaml's `pafthreshold` as create_multianimaltraining_dataset writes it.
inline constexpr double kProjectPafThreshold = 0.1;
/// inference_cfg.yaml's `minimalnumberofconnections` for a project: half the multi-animal
/// bodyparts.
inline int project_min_links(int multi_bodyparts) {
  return multi_bodyparts / 2;
}

struct AssemblySettings {
  int max_individuals = 1;     // inference_cfg `topktoretain`: the number of animals
  double pcutoff = 0.1;        // inference_cfg `pcutoff`: weaker candidates are never linked
  double min_affinity = 0.05;  // inference_cfg `pafthreshold` (Assembler default; template 0.1)
  int min_links = 2;         // `minimalnumberofconnections` (Assembler default; projects get J / 2)
  double max_overlap = 0.8;  // pose NMS; 0 or 1 turns it off
  bool greedy = false;       // per edge: false = optimal assignment, true = greedy by affinity
  // labpose's: an animal with 1 to min_links - 1 links is kept where the image has fewer than
  // max_individuals animals without it (an animal partly hidden by another), strongest first,
  // unless it overlaps a kept one as pose NMS counts (DeepLabCut drops it)
  bool keep_partial = false;
};

/// labpose's temporal prior for the frames of a video (temporal_prior.hpp): the links that the
/// previous frame's animals place across two animals are weakened, and held back while the animals
/// are built.
struct TemporalPrior {
  bool enabled = false;
  // a candidate belongs to a previous animal when each is the other's nearest (its keypoint of the
  // candidate's bodypart) by at least this factor over the next nearest
  double margin = 2.0;
  // and when it is within this fraction of the animal's size (the largest distance between two of
  // its keypoints) of that keypoint
  double max_shift = 0.5;
  // the affinity of a link between candidates of two different previous animals is multiplied by
  // this
  double factor = 0.5;
};

/// One animal (or the `single` pseudo-animal of unique bodyparts).
struct Assembly {
  std::vector<int> candidate;                 // per bodypart: its index in Candidates, -1 = none
  std::vector<KeypointPrediction> keypoints;  // per bodypart: x, y, likelihood; NaN where none
  int links = 0;                              // links joined, including those closing a cycle
  double affinity_sum = 0.0;
  // per bodypart: the individual the identity head favours at its keypoint (DeepLabCut's
  // `group`), -1 = none; empty without an identity head (identity.hpp)
  std::vector<int> identity;

  /// The number of bodyparts present.
  int size() const;
  /// The mean affinity of its links; 0 without links.
  double affinity() const;
  /// The mean likelihood of the bodyparts present; NaN when none is.
  double confidence() const;
};

struct Assemblies {
  std::vector<Assembly> animals;   // over the multi-animal bodyparts, best first
  std::optional<Assembly> single;  // over the unique bodyparts; absent when none was found
};

/// Per multi-animal bodypart, per candidate: the index of the previous frame's animal it belongs
/// to, or -1 (temporal_prior.hpp's previous_owners). Empty: no previous frame.
using PreviousOwners = std::vector<std::vector<int>>;

/// The animals of one image. candidates: J bodyparts, the first `multi_bodyparts` per animal, the
/// rest unique; costs: edge_costs(...) for `graph` (whose edges index multi-animal bodyparts).
/// With `owners` (a frame of a video), links between candidates of two different previous animals
/// are held back until the other links have built what they can (temporal_prior.hpp).
/// Throws Error when the inputs disagree (costs vs graph vs candidates vs owners) or a setting is
/// out of range.
Assemblies assemble(const Candidates& candidates, const std::vector<EdgeCosts>& costs,
                    const PafGraph& graph, int multi_bodyparts, const AssemblySettings& settings,
                    const PreviousOwners& owners = {});

struct MapAssemblySettings {
  CandidateSettings candidates;
  AffinitySettings affinity;
  AssemblySettings assembly;
  TemporalPrior temporal;  // frames of a video only (evaluate's images are independent)
};

/// What a multi-animal network found in one image before assembly: the candidates of every
/// bodypart and the costs of every edge of the graph the maps were made for.
struct ImageDetections {
  Candidates candidates;
  std::vector<EdgeCosts> costs;  // per edge of that graph
  // DeepLabCut's `identity`: per bodypart, its candidates' softmax over the I individuals,
  // (candidates, I) row-major; empty without an identity head (identity.hpp)
  std::vector<std::vector<double>> identity;
};

/// Throws Error when `detections` were not made for a graph of `graph`'s size.
void check_made_for(const ImageDetections& detections, const PafGraph& graph);

/// find_candidates and edge_costs on one image's maps: scores (J, H, W), locref (2J, H, W) and
/// pafs (2E, H, W) with E = graph.size().
ImageDetections detect_maps(const MapStack& scores, const MapStack& locref, const MapStack& pafs,
                            const PafGraph& graph, int multi_bodyparts,
                            const MapAssemblySettings& settings);

/// assemble() with the edges `edges` (indices into `graph`, the graph `detections` were made
/// for) only: DeepLabCut's `paf_best`.
Assemblies assemble_edges(const ImageDetections& detections, const PafGraph& graph,
                          const std::vector<int>& edges, int multi_bodyparts,
                          const AssemblySettings& settings, const PreviousOwners& owners = {});

/// detect_maps, then assemble with every edge of `graph`.
Assemblies assemble_maps(const MapStack& scores, const MapStack& locref, const MapStack& pafs,
                         const PafGraph& graph, int multi_bodyparts,
                         const MapAssemblySettings& settings);

}  // namespace labpose::pipeline
