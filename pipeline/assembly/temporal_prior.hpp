// labpose's temporal prior for assembling the frames of a video: the animals of the previous frame
// say which candidates are unlikely to belong to one animal. DeepLabCut assembles each frame alone
// (its Assembler's `window_size` is 0 unless asked). Where two animals touch, a limb's field can
// then join one animal's head to the other's tail, and the tracker follows the wrong body.
//
// A candidate belongs to a previous animal when the two are each other's nearest (the candidate
// among the bodypart's candidates, the animal's keypoint of that bodypart among the animals') by
// the factor `margin` over the next nearest, and within `max_shift` of the animal's size. A link
// between candidates that belong to two different previous animals
// - has its affinity multiplied by `factor`, which counts where each edge pairs its candidates;
// - and is held back while the animals are built: each previous animal is rebuilt from its own
//   links first, so that a neighbour whose strongest link comes earlier cannot take its joints by a
//   weaker one (a head whose own ear is hidden under the other animal, linked to that animal's
//   ear). Held links then join what is still unjoined, and fuse surplus animals.
// Links with a candidate that belongs to no animal (a new, uncertain or crowded one) stay as they
// are. The prior never cuts a link, and needs no identity head. Not cutting matters: an animal
// assembled wrongly in one frame would otherwise hold the next frames to the same mistake.
// TemporalPrior (assemble.hpp) holds the settings.
#pragma once

#include <vector>

#include "pipeline/assembly/assemble.hpp"

namespace labpose::pipeline {

/// Per multi-animal bodypart, per candidate: the index in `previous` of the animal it belongs to,
/// or -1 (all -1 when the prior is off).
PreviousOwners previous_owners(const Candidates& candidates, int multi_bodyparts,
                               const std::vector<Assembly>& previous, const TemporalPrior& prior);

/// Multiplies by prior.factor the affinity of every pair of the edges in use (`edges`, indices into
/// `graph`) whose two candidates belong to different previous animals (`owners`, from
/// previous_owners); `costs` are edge_costs(...) for `graph` (over multi-animal bodyparts). The
/// costs of edges not in use are neither read nor changed: an analysis keeps only those in use.
/// Nothing changes when no candidate has an owner (the prior off, or no previous frame).
void weaken_links_across_animals(std::vector<EdgeCosts>& costs, const PafGraph& graph,
                                 const std::vector<int>& edges, int multi_bodyparts,
                                 const PreviousOwners& owners, const TemporalPrior& prior);

/// assemble_edges after weaken_links_across_animals, with the links across previous animals held
/// back: one frame of a video, `previous` being the animals of the frame before (empty for the
/// first frame, or after a frame that was not read).
Assemblies assemble_after(const ImageDetections& detections, const PafGraph& graph,
                          const std::vector<int>& edges, int multi_bodyparts,
                          const MapAssemblySettings& settings,
                          const std::vector<Assembly>& previous);

}  // namespace labpose::pipeline
