// Conversion of decoded FFmpeg frames (any pixel format) to packed 8-bit RGB or BGR, cropped on the
// way. The common planar YUV formats take a fixed-point path written for the compiler to vectorize
// (libswscale's unscaled YUV 4:4:4 path is ~5x slower); every other format goes through libswscale.
// Internal to pipeline/video; not a scaler.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/video/ffmpeg.hpp"

namespace labpose::pipeline {

struct YuvCoefficients;
struct YuvLayout;

class FrameConverter {
 public:
  /// Output: the rectangle (x, y, width, height) of each frame, packed RGB (or BGR when `bgr`),
  /// converted in up to `threads` bands side by side (0: OpenCV's thread count).
  FrameConverter(int x, int y, int width, int height, bool bgr, int threads);

  /// Writes the rectangle of `frame` into `out` (height rows of width*3 bytes, `stride` apart).
  /// Throws Error when the frame is smaller than the rectangle or libswscale cannot convert it.
  void convert(const AVFrame& frame, std::uint8_t* out, std::size_t stride);

 private:
  void convert_rows(const AVFrame& frame, const YuvLayout& layout, const YuvCoefficients& c,
                    int first, int end, std::uint8_t* scratch, std::uint8_t* out,
                    std::size_t stride);
  void convert_with_swscale(const AVFrame& frame, std::uint8_t* out, std::size_t stride);

  int x_, y_, width_, height_;
  bool bgr_;
  int parts_ = 1;               // bands converted in parallel
  std::size_t part_bytes_ = 0;  // scratch per band
  ffmpeg::ScaleContext scale_;  // the libswscale fallback, made on first use
  // Per band scratch for the fast path; a whole converted frame for the fallback.
  std::vector<std::uint8_t> scratch_;
};

}  // namespace labpose::pipeline
