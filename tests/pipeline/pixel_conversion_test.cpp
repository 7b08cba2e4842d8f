// FrameConverter: each one-pass kernel this CPU has (AVX-512, AVX2) gives exactly the bytes of the
// portable planes-and-merge path, for every planar format, range, matrix, channel order, odd widths
// and odd crops; and all are within 2 code values of the conversion in double precision. NV12
// (NVDEC's pictures) gives the bytes of the same samples in planar 4:2:0.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "pipeline/video/ffmpeg.hpp"
#include "pipeline/video/pixel_conversion.hpp"

namespace labpose::pipeline {
namespace {

// A decoded-looking frame of random samples (every value 0..255 occurs, out-of-range ones too).
ffmpeg::Frame random_frame(AVPixelFormat format, int shift_x, int shift_y, int width, int height,
                           AVColorSpace space, AVColorRange range, std::mt19937& random) {
  ffmpeg::Frame frame(av_frame_alloc());
  frame->format = format;
  frame->width = width;
  frame->height = height;
  frame->colorspace = space;
  frame->color_range = range;
  if (av_frame_get_buffer(frame.get(), 0) < 0) throw std::bad_alloc();
  std::uniform_int_distribution<int> byte(0, 255);
  for (int plane = 0; plane < 3; ++plane) {
    const int rows = plane == 0 ? height : -((-height) >> shift_y);  // chroma: rounded up
    const int columns = plane == 0 ? width : -((-width) >> shift_x);
    for (int row = 0; row < rows; ++row) {
      std::uint8_t* samples =
          frame->data[plane] + static_cast<std::ptrdiff_t>(row) * frame->linesize[plane];
      for (int i = 0; i < columns; ++i) samples[i] = static_cast<std::uint8_t>(byte(random));
    }
  }
  return frame;
}

struct Format {
  AVPixelFormat format;
  int shift_x, shift_y;
  bool full_range;  // the deprecated "J" formats
};

constexpr Format kFormats[] = {
    {AV_PIX_FMT_YUV420P, 1, 1, false}, {AV_PIX_FMT_YUVJ420P, 1, 1, true},
    {AV_PIX_FMT_YUV422P, 1, 0, false}, {AV_PIX_FMT_YUVJ422P, 1, 0, true},
    {AV_PIX_FMT_YUV444P, 0, 0, false}, {AV_PIX_FMT_YUVJ444P, 0, 0, true},
};

// Pixel (x, y) of the frame in double precision, R G B, each rounded and clamped.
std::array<int, 3> exact_rgb(const AVFrame& frame, const Format& format, int x, int y) {
  const bool full = format.full_range || frame.color_range == AVCOL_RANGE_JPEG;
  const bool bt709 = frame.colorspace == AVCOL_SPC_BT709;
  const double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114, kg = 1 - kr - kb;
  const double luma = frame.data[0][y * frame.linesize[0] + x];
  const int cx = x >> format.shift_x, cy = y >> format.shift_y;
  const double cb = frame.data[1][cy * frame.linesize[1] + cx] - 128.0;
  const double cr = frame.data[2][cy * frame.linesize[2] + cx] - 128.0;
  const double l = full ? luma : (luma - 16) * 255 / 219;
  const double scale = full ? 1.0 : 255.0 / 224;
  const double r = l + 2 * (1 - kr) * scale * cr;
  const double b = l + 2 * (1 - kb) * scale * cb;
  const double g = l - 2 * scale * (kb * (1 - kb) * cb + kr * (1 - kr) * cr) / kg;
  const auto byte = [](double value) {
    return static_cast<int>(std::clamp(std::lround(value), 0L, 255L));
  };
  return {byte(r), byte(g), byte(b)};
}

TEST(FrameConverter, OnePassKernelsMatchThePortablePathAndTheExactFormula) {
  std::vector<ConversionKernel> kernels;
  for (const ConversionKernel kernel : {ConversionKernel::avx512, ConversionKernel::avx2}) {
    if (conversion_kernel_available(kernel)) kernels.push_back(kernel);
  }
  if (kernels.empty())
    GTEST_SKIP() << "this CPU has neither AVX-512 nor AVX2: only the portable path runs";
  EXPECT_EQ(FrameConverter(0, 0, 8, 8, false).kernel(), kernels.front()) << "fastest";
  std::mt19937 random(7);
  struct Region {
    int frame_width, frame_height, x, y, width, height;
  };
  // Whole frames of widths that are and are not multiples of 32, and crops starting at odd
  // columns (inside a chroma pair) and rows.
  constexpr Region kRegions[] = {{640, 34, 0, 0, 640, 34},  {77, 9, 0, 0, 77, 9},
                                 {100, 40, 27, 13, 61, 21}, {64, 18, 1, 1, 63, 17},
                                 {40, 6, 5, 0, 31, 6},      {200, 4, 3, 0, 197, 4}};
  for (const Format& format : kFormats) {
    for (const AVColorSpace space : {AVCOL_SPC_UNSPECIFIED, AVCOL_SPC_BT709}) {
      for (const AVColorRange range : {AVCOL_RANGE_MPEG, AVCOL_RANGE_JPEG}) {
        for (const Region& region : kRegions) {
          for (const bool bgr : {false, true}) {
            SCOPED_TRACE(::testing::Message()
                         << "format " << format.format << " space " << space << " range " << range
                         << " region " << region.width << "x" << region.height << " at " << region.x
                         << "," << region.y << (bgr ? " BGR" : " RGB"));
            const ffmpeg::Frame frame =
                random_frame(format.format, format.shift_x, format.shift_y, region.frame_width,
                             region.frame_height, space, range, random);
            const std::size_t stride = static_cast<std::size_t>(region.width) * 3 + 5;
            const std::size_t bytes = stride * static_cast<std::size_t>(region.height);
            std::vector<std::uint8_t> portable(bytes, 0xA5);
            FrameConverter(region.x, region.y, region.width, region.height, bgr,
                           ConversionKernel::portable)
                .convert(*frame, portable.data(), stride);
            for (const ConversionKernel kernel : kernels) {
              std::vector<std::uint8_t> fast(bytes, 0xA5);
              FrameConverter(region.x, region.y, region.width, region.height, bgr, kernel)
                  .convert(*frame, fast.data(), stride);
              // Identical, row padding (left as 0xA5) included: nothing is written past a row.
              ASSERT_EQ(fast, portable) << "kernel " << static_cast<int>(kernel);
            }
            int worst = 0;
            for (int row = 0; row < region.height; ++row) {
              for (int col = 0; col < region.width; ++col) {
                const auto want = exact_rgb(*frame, format, region.x + col, region.y + row);
                const std::uint8_t* got = &portable[static_cast<std::size_t>(row) * stride +
                                                    static_cast<std::size_t>(col) * 3];
                for (int channel = 0; channel < 3; ++channel) {
                  const int at = bgr ? 2 - channel : channel;
                  worst =
                      std::max(worst, std::abs(got[at] - want[static_cast<std::size_t>(channel)]));
                }
              }
            }
            EXPECT_LE(worst, 2) << "largest difference from the exact conversion";
          }
        }
      }
    }
  }
}

// `planar` (4:2:0) with its chroma planes interleaved into one, as NVDEC hands pictures over.
ffmpeg::Frame as_nv12(const AVFrame& planar) {
  ffmpeg::Frame frame(av_frame_alloc());
  frame->format = AV_PIX_FMT_NV12;
  frame->width = planar.width;
  frame->height = planar.height;
  frame->colorspace = planar.colorspace;
  frame->color_range = planar.color_range;
  if (av_frame_get_buffer(frame.get(), 0) < 0) throw std::bad_alloc();
  for (int row = 0; row < planar.height; ++row) {
    std::memcpy(frame->data[0] + row * frame->linesize[0],
                planar.data[0] + row * planar.linesize[0], static_cast<std::size_t>(planar.width));
  }
  for (int row = 0; row < (planar.height + 1) / 2; ++row) {
    std::uint8_t* both = frame->data[1] + row * frame->linesize[1];
    for (int i = 0; i < (planar.width + 1) / 2; ++i) {
      both[2 * i] = planar.data[1][row * planar.linesize[1] + i];
      both[2 * i + 1] = planar.data[2][row * planar.linesize[2] + i];
    }
  }
  return frame;
}

TEST(FrameConverter, Nv12GivesTheBytesOfTheSamePlanarPicture) {
  std::vector<ConversionKernel> kernels{ConversionKernel::portable};
  for (const ConversionKernel kernel : {ConversionKernel::avx512, ConversionKernel::avx2}) {
    if (conversion_kernel_available(kernel)) kernels.push_back(kernel);
  }
  std::mt19937 random(11);
  struct Region {
    int frame_width, frame_height, x, y, width, height;
  };
  constexpr Region kRegions[] = {{640, 34, 0, 0, 640, 34},
                                 {77, 9, 0, 0, 77, 9},
                                 {100, 40, 27, 13, 61, 21},
                                 {64, 18, 1, 1, 63, 17}};
  for (const AVColorRange range : {AVCOL_RANGE_MPEG, AVCOL_RANGE_JPEG}) {
    for (const Region& region : kRegions) {
      const ffmpeg::Frame planar =
          random_frame(AV_PIX_FMT_YUV420P, 1, 1, region.frame_width, region.frame_height,
                       AVCOL_SPC_BT709, range, random);
      const ffmpeg::Frame nv12 = as_nv12(*planar);
      const std::size_t stride = static_cast<std::size_t>(region.width) * 3 + 3;
      const std::size_t bytes = stride * static_cast<std::size_t>(region.height);
      for (const ConversionKernel kernel : kernels) {
        SCOPED_TRACE(::testing::Message() << "kernel " << static_cast<int>(kernel) << " region "
                                          << region.width << "x" << region.height << " at "
                                          << region.x << "," << region.y << " range " << range);
        std::vector<std::uint8_t> want(bytes, 0x5A), got(bytes, 0x5A);
        FrameConverter(region.x, region.y, region.width, region.height, false, kernel)
            .convert(*planar, want.data(), stride);
        FrameConverter(region.x, region.y, region.width, region.height, false, kernel)
            .convert(*nv12, got.data(), stride);
        ASSERT_EQ(got, want);
      }
    }
  }
}

}  // namespace
}  // namespace labpose::pipeline
