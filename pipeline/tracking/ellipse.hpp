// The ellipse DeepLabCut's ellipse tracker follows: the sd-sigma covariance ellipse of an animal's
// keypoints (EllipseFitter with sd = 2) and its similarity to another
// (Ellipse.calc_similarity_with). Not the least-squares conic fit (DeepLabCut's sd = 0), which its
// tracker never uses.
#pragma once

#include <optional>
#include <vector>

#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

struct Ellipse {
  double x = 0.0, y = 0.0;           // centre, pixels
  double width = 0.0, height = 0.0;  // full axes, pixels: width along theta, height across
  double theta = 0.0;                // radians in [0, pi)
};

/// The sd-sigma ellipse of the keypoints with finite x and y; none with fewer than 3 of them.
std::optional<Ellipse> fit_ellipse(const std::vector<KeypointPrediction>& keypoints,
                                   double sd = 2.0);

/// DeepLabCut's similarity in [0, 1]: 0.8 c + 0.2 c |cos(dtheta)|, c = 1 - min(centre distance /
/// largest axis, 1).
double ellipse_similarity(const Ellipse& a, const Ellipse& b);

}  // namespace labpose::pipeline
