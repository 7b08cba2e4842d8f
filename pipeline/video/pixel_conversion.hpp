// Conversion of decoded FFmpeg frames (any pixel format) to packed 8-bit RGB or BGR, cropped on the
// way. The common planar YUV formats, and NV12 (4:2:0 with U and V interleaved, what NVDEC gives),
// take our fixed-point kernels (libswscale's unscaled YUV 4:4:4 path is ~5x slower), so a picture
// gives the same bytes however it was decoded; every other format goes through libswscale.
// Internal to pipeline/video; not a scaler.
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/video/ffmpeg.hpp"

namespace labpose::pipeline {

struct YuvCoefficients;
struct YuvLayout;

/// How planar 8-bit YUV rows become packed bytes. The one-pass kernels convert each row straight
/// to packed bytes, 64 pixels at a time with AVX-512 (BW and VBMI) or 32 with AVX2; `portable`
/// computes three planes with compiler-vectorized loops and interleaves them with OpenCV (the
/// fallback, and the tests' reference). All give the same bytes. `fastest`: the first this CPU has.
enum class ConversionKernel { fastest, avx512, avx2, portable };

/// Whether this build and CPU can run `kernel` (fastest and portable: always).
bool conversion_kernel_available(ConversionKernel kernel);

class FrameConverter {
 public:
  /// Output: the rectangle (x, y, width, height) of each frame, packed RGB (or BGR when `bgr`).
  /// `kernel` must be available.
  FrameConverter(int x, int y, int width, int height, bool bgr,
                 ConversionKernel kernel = ConversionKernel::fastest);

  /// Writes the rectangle of `frame` into `out` (height rows of width*3 bytes, `stride` apart).
  /// Throws Error when the frame is smaller than the rectangle or libswscale cannot convert it.
  void convert(const AVFrame& frame, std::uint8_t* out, std::size_t stride);

  /// The kernel planar YUV frames take (what `fastest` resolved to).
  ConversionKernel kernel() const { return kernel_; }

 private:
  void convert_rows(const AVFrame& frame, const YuvLayout& layout, const YuvCoefficients& c,
                    std::uint8_t* out, std::size_t stride);
  void convert_with_swscale(const AVFrame& frame, std::uint8_t* out, std::size_t stride);

  int x_, y_, width_, height_;
  bool bgr_;
  ConversionKernel kernel_;
  std::size_t scratch_bytes_ = 0;  // the portable path's planes and chroma rows
  ffmpeg::ScaleContext scale_;     // the libswscale fallback, made on first use
  // Scratch of the portable path; a whole converted frame for the libswscale fallback.
  std::vector<std::uint8_t> scratch_;
};

}  // namespace labpose::pipeline
