// A rendered synthetic frame held in memory for the synthetic video tests: rendering one frame of
// a scene (the single mouse or several), reading a pixel, comparing two pixels. Test support only.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "pipeline/synthetic/ground_truth.hpp"

namespace labpose::testing {

using Pixel = std::array<int, 3>;  // B, G, R

struct Rendered {
  int width, height;
  std::vector<std::uint8_t> bgr;
  /// The pixel nearest to (x, y), or nullopt outside the frame.
  std::optional<Pixel> at(double x, double y) const {
    const int column = static_cast<int>(std::lround(x)), row = static_cast<int>(std::lround(y));
    if (column < 0 || row < 0 || column >= width || row >= height) return std::nullopt;
    const std::uint8_t* p = &bgr[(static_cast<std::size_t>(row) * static_cast<std::size_t>(width) +
                                  static_cast<std::size_t>(column)) *
                                 3];
    return Pixel{p[0], p[1], p[2]};
  }
};

/// Frame `index` of `scene` (SyntheticMouse or SyntheticMice, whose video is `video`), with or
/// without its animals.
template <typename Scene>
Rendered render_frame(const Scene& scene, const pipeline::SyntheticVideoOptions& video, int index,
                      bool with_animals) {
  Rendered image{video.width, video.height,
                 std::vector<std::uint8_t>(static_cast<std::size_t>(video.width) *
                                           static_cast<std::size_t>(video.height) * 3)};
  scene.render(index, image.bgr.data(), static_cast<std::size_t>(video.width) * 3, with_animals);
  return image;
}

/// The sum of the absolute channel differences, or -1 when either pixel is missing.
inline int difference(const std::optional<Pixel>& a, const std::optional<Pixel>& b) {
  if (!a || !b) return -1;
  return std::abs((*a)[0] - (*b)[0]) + std::abs((*a)[1] - (*b)[1]) + std::abs((*a)[2] - (*b)[2]);
}

}  // namespace labpose::testing
