// Markers on an image as DeepLabCut's evaluation and label plots draw them with matplotlib: '+'
// for a human label, '.' for a confident prediction, 'x' for an unsure one, sized from
// config.yaml's dotsize (points at 100 dpi) and blended with its alphavalue. Not a figure: no axes,
// no text.
#pragma once

#include <vector>

#include "pipeline/plots/colormap.hpp"

namespace cv {
class Mat;
}

namespace labpose::pipeline {

enum class MarkerShape { plus, dot, cross };  // matplotlib's '+', '.', 'x'

struct Marker {
  double x = 0, y = 0;  // pixels (drawn at the truncated integer position, as DeepLabCut does)
  MarkerShape shape = MarkerShape::plus;
  Rgb color;
};

/// Draws `markers` (in order, later on top) onto an 8-bit RGB image, blended with `alpha`;
/// `size` is matplotlib's marker size in points. Markers with a NaN coordinate are skipped.
void draw_markers(cv::Mat& rgb, const std::vector<Marker>& markers, double size, double alpha);

}  // namespace labpose::pipeline
