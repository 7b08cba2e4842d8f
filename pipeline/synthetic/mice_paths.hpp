// The paths of several synthetic mice in one arena. Each walks as the single mouse does (its own
// smooth random speed and turning, away from the walls); on top, all are drawn to a meeting place
// that moves every few seconds, each at its own rhythm, so they meet, touch and pass each other
// again and again; and their bodies cannot go through each other, only press and overlap a little.
// Not a model of social behaviour: just enough crossings and contacts to test pose and identity.
#pragma once

#include <vector>

#include "pipeline/synthetic/ground_truth.hpp"
#include "pipeline/synthetic/mouse_body.hpp"

namespace labpose::pipeline::synthetic {

/// How far (body units) two mice's body discs may overlap when they press against each other.
constexpr double kAllowedOverlap = 4.0;

/// Every mouse's pose in every frame, [individual][frame]; deterministic for options.seed.
/// `animals` >= 1.
std::vector<std::vector<MousePose>> walk_together(const SyntheticVideoOptions& options,
                                                  int animals);

}  // namespace labpose::pipeline::synthetic
