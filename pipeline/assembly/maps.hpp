// A view of one image's network output on the stride grid, as the assembly library reads it:
// `channels` float maps of height x width cells, channel-major and row-major (the (C, H, W) block
// of one image in labpose's NCHW tensors). Not an owner of the values and not a tensor type.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace labpose::pipeline {

/// values: (C, H, W) = (channels, height, width), not owned; must outlive the view.
struct MapStack {
  std::span<const float> values;
  int channels = 0;
  int height = 0;
  int width = 0;

  /// The value of `channel` at (row, col); the caller keeps the indices in range.
  float at(int channel, int row, int col) const {
    const auto index = (static_cast<std::size_t>(channel) * static_cast<std::size_t>(height) +
                        static_cast<std::size_t>(row)) *
                           static_cast<std::size_t>(width) +
                       static_cast<std::size_t>(col);
    return values[index];
  }
};

/// Throws Error naming `what` (e.g. "score maps") when a dimension is negative or the number of
/// values is not channels x height x width.
void check_map_stack(const MapStack& maps, std::string_view what);

/// Throws Error when `maps` (named `what`) is not on the grid of `reference` (named
/// `reference_what`): both must be height x width cells.
void check_same_grid(const MapStack& maps, std::string_view what, const MapStack& reference,
                     std::string_view reference_what);

}  // namespace labpose::pipeline
