// Colours for plotting bodyparts as DeepLabCut picks them: config.yaml's `colormap` sampled at
// `count` evenly spaced points as matplotlib's get_cmap(name, count) does, for the maps projects
// use (rainbow, jet, viridis, cool, hot, gray, tab10), and matplotlib's colour names for single
// colours (the skeleton). Not a plotting library: drawing is
// markers.hpp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace labpose::pipeline {

struct Rgb {
  double r = 0, g = 0, b = 0;  // 0..1
};

/// The colormap names colormap_colors() knows.
const std::vector<std::string>& known_colormaps();

/// `count` colours of colormap `name`, equal to matplotlib's get_cmap(name, count)(i) for
/// i = 0..count-1. An unknown name falls back to rainbow with a warning on the console.
std::vector<Rgb> colormap_colors(std::string_view name, std::size_t count);

/// A matplotlib colour name ("black", "white", "red", ..., or "#rrggbb"); unknown names are white
/// with a warning.
Rgb named_color(const std::string& name);

}  // namespace labpose::pipeline
