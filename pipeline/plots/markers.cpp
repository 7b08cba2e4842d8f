// Marker drawing.
#include "pipeline/plots/markers.hpp"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

namespace labpose::pipeline {

void draw_markers(cv::Mat& rgb, const std::vector<Marker>& markers, double size, double alpha) {
  // matplotlib figures saved at 100 dpi: one point is 100/72 pixels.
  const double extent = std::max(3.0, size * 100.0 / 72.0);
  const int thickness = std::max(1, static_cast<int>(std::lround(extent / 10.0)));
  cv::Mat overlay = rgb.clone();
  for (const Marker& marker : markers) {
    if (std::isnan(marker.x) || std::isnan(marker.y)) continue;
    const cv::Point center(static_cast<int>(marker.x), static_cast<int>(marker.y));
    const cv::Scalar color(std::round(marker.color.r * 255.0), std::round(marker.color.g * 255.0),
                           std::round(marker.color.b * 255.0));
    const int half = static_cast<int>(std::lround(extent / 2.0));
    switch (marker.shape) {
      case MarkerShape::plus:
        cv::line(overlay, center - cv::Point(half, 0), center + cv::Point(half, 0), color,
                 thickness, cv::LINE_AA);
        cv::line(overlay, center - cv::Point(0, half), center + cv::Point(0, half), color,
                 thickness, cv::LINE_AA);
        break;
      case MarkerShape::dot:  // matplotlib's '.' is a disc of half the marker size
        cv::circle(overlay, center, std::max(1, half / 2), color, cv::FILLED, cv::LINE_AA);
        break;
      case MarkerShape::cross: {
        const int diagonal = static_cast<int>(std::lround(half * 0.71));
        cv::line(overlay, center + cv::Point(-diagonal, -diagonal),
                 center + cv::Point(diagonal, diagonal), color, thickness, cv::LINE_AA);
        cv::line(overlay, center + cv::Point(-diagonal, diagonal),
                 center + cv::Point(diagonal, -diagonal), color, thickness, cv::LINE_AA);
        break;
      }
    }
  }
  cv::addWeighted(overlay, alpha, rgb, 1.0 - alpha, 0.0, rgb);
}

}  // namespace labpose::pipeline
