// A plain line/scatter/histogram figure drawn with OpenCV and saved as PNG: one set of axes with
// numbered ticks, axis labels, a title and a legend. Enough for DeepLabCut's trajectory plots on a
// headless machine without matplotlib; not a plotting library (no subplots, no log axes).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/plots/colormap.hpp"

namespace labpose::pipeline {

/// A rectangle of a figure's image in pixels: its top-left corner, width and height.
struct Box {
  int x = 0, y = 0, width = 0, height = 0;
  bool intersects(const Box& other) const;
  bool inside(int image_width, int image_height) const;
};

/// Where a figure's parts go. The y label is turned a quarter anticlockwise in the left margin,
/// centred on the plot (as matplotlib's), and made smaller when it is longer than the plot is high;
/// the title sits above the plot, made smaller when it is wider than the image right of the margin.
struct FigureLayout {
  Box plot, title, x_label, y_label;
  double title_scale = 0.55, y_label_scale = 0.45;  // OpenCV's font scales
};

class Figure {
 public:
  Figure(int width, int height, std::string title, std::string x_label, std::string y_label);

  /// The data range shown (computed from the series when not set; y can run downwards, as images).
  void set_x_range(double low, double high);
  void set_y_range(double low, double high, bool downwards = false);

  /// A polyline through the points (NaN breaks it); dashed when asked.
  void add_line(const std::vector<double>& x, const std::vector<double>& y, Rgb color,
                std::string label, bool dashed = false);
  /// Dots at the points (NaN skipped).
  void add_points(const std::vector<double>& x, const std::vector<double>& y, Rgb color,
                  std::string label);
  /// Bars of `counts` over equal bins from `low` to `high`, drawn translucent so several overlap.
  void add_histogram(const std::vector<double>& counts, double low, double high, Rgb color,
                     std::string label);

  /// The boxes save() draws the plot, title and labels in.
  FigureLayout layout() const;

  /// Draws everything and writes a PNG atomically.
  void save(const std::filesystem::path& png) const;

 private:
  struct Series {
    enum class Kind { line, points, bars } kind;
    std::vector<double> x, y;
    Rgb color;
    std::string label;
    bool dashed = false;
    double bar_width = 0.0;
  };
  int width_, height_;
  std::string title_, x_label_, y_label_;
  bool x_set_ = false, y_set_ = false, y_down_ = false;
  double x_low_ = 0, x_high_ = 1, y_low_ = 0, y_high_ = 1;
  std::vector<Series> series_;
};

/// Histogram counts of the finite `values` in `bins` equal bins over [low, high] (the last bin
/// includes high).
std::vector<double> histogram(const std::vector<double>& values, int bins, double low, double high);

}  // namespace labpose::pipeline
