// Frame conversion: fixed-point YUV -> RGB for planar 8-bit YUV, libswscale for the rest.
#include "pipeline/video/convert.hpp"

#include <fmt/core.h>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cstring>
#include <optional>

#include "core/error.hpp"

extern "C" {
#include <libavutil/pixdesc.h>
}

namespace labpose::pipeline {

// The fast path works in 16-bit lanes, so that its loops vectorize to SSE2/AVX2 multiply-high
// (pmulhw): luma (Y - offset) << 7 times a Q14 scale and chroma (C - 128) << 8 times a Q13
// coefficient, each keeping the high 16 bits, give terms in 1/32 code values whose sums stay
// below 2^15.
struct YuvCoefficients {
  std::int16_t y_offset;          // 16 for limited ("TV") range, 0 for full range
  std::int16_t luma;              // Y scale, Q14
  std::int16_t red_v, blue_u;     // V -> R, U -> B, Q13
  std::int16_t green_u, green_v;  // U, V -> G (subtracted), Q13
};

// The planar YUV formats with 8-bit samples this file converts itself: chroma subsampling shifts
// and whether the format implies full range (the deprecated "J" formats).
struct YuvLayout {
  int shift_x = 0, shift_y = 0;
  bool full_range = false;
};

namespace {

constexpr int kStripRows = 16;  // rows converted to planes before they are interleaved

constexpr int kResultBits = 5;  // fraction bits of the terms

YuvCoefficients coefficients(AVColorSpace space, bool full_range) {
  // BT.709 for HD material tagged so; BT.601 otherwise (what libswscale and OpenCV assume for
  // untagged video, which is most lab video).
  const bool bt709 = space == AVCOL_SPC_BT709;
  const double kr = bt709 ? 0.2126 : 0.299, kb = bt709 ? 0.0722 : 0.114, kg = 1.0 - kr - kb;
  const double luma = full_range ? 1.0 : 255.0 / 219.0, chroma = full_range ? 1.0 : 255.0 / 224.0;
  const auto fixed = [](double value, int bits) {
    return static_cast<std::int16_t>(value * (1 << bits) + 0.5);
  };
  return {static_cast<std::int16_t>(full_range ? 0 : 16),
          fixed(luma, 14),
          fixed(2.0 * (1.0 - kr) * chroma, 13),
          fixed(2.0 * (1.0 - kb) * chroma, 13),
          fixed(2.0 * kb * (1.0 - kb) / kg * chroma, 13),
          fixed(2.0 * kr * (1.0 - kr) / kg * chroma, 13)};
}

// A sum in 1/32 code values to a byte, saturated.
inline std::uint8_t clamp_byte(std::int16_t sum) {
  return static_cast<std::uint8_t>(
      std::clamp<std::int16_t>(static_cast<std::int16_t>(sum >> kResultBits), 0, 255));
}

inline std::int16_t multiply_high(int a, int b) {
  return static_cast<std::int16_t>((a * b) >> 16);
}

// x86-64 builds carry an AVX2 copy of the hot loops next to the baseline (SSE2) one, picked at
// load time.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LABPOSE_AVX2_CLONE __attribute__((target_clones("avx2", "default")))
#else
#define LABPOSE_AVX2_CLONE
#endif

// The chroma part of R, G and B for one row of (upsampled) U and V samples, in 1/32 code values.
LABPOSE_AVX2_CLONE
void chroma_terms(const std::uint8_t* __restrict u, const std::uint8_t* __restrict v, int width,
                  const YuvCoefficients& c, std::int16_t* __restrict red,
                  std::int16_t* __restrict green, std::int16_t* __restrict blue) {
  const int red_v = c.red_v, blue_u = c.blue_u, green_u = c.green_u, green_v = c.green_v;
  for (int i = 0; i < width; ++i) {
    const int cb = static_cast<std::int16_t>((u[i] - 128) << 8);
    const int cr = static_cast<std::int16_t>((v[i] - 128) << 8);
    red[i] = multiply_high(cr, red_v);
    green[i] = static_cast<std::int16_t>(-multiply_high(cb, green_u) - multiply_high(cr, green_v));
    blue[i] = multiply_high(cb, blue_u);
  }
}

// One row of luma plus its chroma terms to three planes of bytes (saturated to 0..255), all in
// 16-bit lanes.
LABPOSE_AVX2_CLONE
void luma_row(const std::uint8_t* __restrict y, int width, const YuvCoefficients& c,
              const std::int16_t* __restrict red_term, const std::int16_t* __restrict green_term,
              const std::int16_t* __restrict blue_term, std::uint8_t* __restrict red,
              std::uint8_t* __restrict green, std::uint8_t* __restrict blue) {
  constexpr std::int16_t kRound = 1 << (kResultBits - 1);
  const int y_offset = c.y_offset, luma_scale = c.luma;
  for (int i = 0; i < width; ++i) {
    const auto luma = static_cast<std::int16_t>(
        multiply_high(static_cast<std::int16_t>((y[i] - y_offset) << 7), luma_scale) + kRound);
    red[i] = clamp_byte(static_cast<std::int16_t>(luma + red_term[i]));
    green[i] = clamp_byte(static_cast<std::int16_t>(luma + green_term[i]));
    blue[i] = clamp_byte(static_cast<std::int16_t>(luma + blue_term[i]));
  }
}

// Repeats each of `pairs` chroma samples twice (horizontal 2x upsampling, vectorizable).
LABPOSE_AVX2_CLONE
void double_samples(const std::uint8_t* __restrict row, int pairs, std::uint8_t* __restrict out) {
  for (int j = 0; j < pairs; ++j) {
    out[2 * j] = row[j];
    out[2 * j + 1] = row[j];
  }
}

std::optional<YuvLayout> planar_layout(int format) {
  switch (format) {
    case AV_PIX_FMT_YUV420P:
      return YuvLayout{1, 1, false};
    case AV_PIX_FMT_YUVJ420P:
      return YuvLayout{1, 1, true};
    case AV_PIX_FMT_YUV422P:
      return YuvLayout{1, 0, false};
    case AV_PIX_FMT_YUVJ422P:
      return YuvLayout{1, 0, true};
    case AV_PIX_FMT_YUV444P:
      return YuvLayout{0, 0, false};
    case AV_PIX_FMT_YUVJ444P:
      return YuvLayout{0, 0, true};
    default:
      return std::nullopt;
  }
}

}  // namespace

FrameConverter::FrameConverter(int x, int y, int width, int height, bool bgr, int threads)
    : x_(x), y_(y), width_(width), height_(height), bgr_(bgr) {
  LABPOSE_ASSERT(x >= 0 && y >= 0 && width > 0 && height > 0);
  const int strips = (height + kStripRows - 1) / kStripRows;
  parts_ = std::clamp(threads > 0 ? threads : cv::getNumThreads(), 1, strips);
  // Per part: three byte planes of one strip (small enough to stay in cache until merged), two
  // rows of upsampled chroma (with a sample to spare), three rows of chroma terms.
  const auto w = static_cast<std::size_t>(width);
  part_bytes_ = 3 * w * kStripRows + 2 * (w + 2) + 3 * w * sizeof(std::int16_t);
  part_bytes_ = (part_bytes_ + 63) / 64 * 64;  // parts on separate cache lines
}

void FrameConverter::convert(const AVFrame& frame, std::uint8_t* out, std::size_t stride) {
  if (x_ + width_ > frame.width || y_ + height_ > frame.height) {
    throw Error(fmt::format("a decoded frame is {}x{}, smaller than the {}x{} region at ({}, {}) "
                            "being read",
                            frame.width, frame.height, width_, height_, x_, y_),
                "the video changes its frame size midway; re-encode it to one size with ffmpeg");
  }
  const auto layout = planar_layout(frame.format);
  if (!layout) {
    convert_with_swscale(frame, out, stride);
    return;
  }
  const bool full_range = layout->full_range || frame.color_range == AVCOL_RANGE_JPEG;
  const YuvCoefficients c = coefficients(frame.colorspace, full_range);
  scratch_.resize(part_bytes_ * static_cast<std::size_t>(parts_));
  // The rows are cut into parts_ bands converted side by side (the decoder's threads leave cores
  // idle between frames); each band has its own scratch, so the output does not depend on them.
  const int strips = (height_ + kStripRows - 1) / kStripRows;
  const auto convert_part = [&](int part) {
    const int first = strips * part / parts_ * kStripRows;
    const int end = std::min(height_, strips * (part + 1) / parts_ * kStripRows);
    convert_rows(frame, *layout, c, first, end,
                 scratch_.data() + part_bytes_ * static_cast<std::size_t>(part), out, stride);
  };
  if (parts_ == 1) {
    convert_part(0);
  } else {
    cv::parallel_for_(
        cv::Range(0, parts_),
        [&](const cv::Range& range) {
          for (int part = range.start; part < range.end; ++part) convert_part(part);
        },
        parts_);
  }
}

void FrameConverter::convert_rows(const AVFrame& frame, const YuvLayout& layout,
                                  const YuvCoefficients& c, int first, int end,
                                  std::uint8_t* scratch, std::uint8_t* out, std::size_t stride) {
  const auto width = static_cast<std::size_t>(width_);
  const std::size_t strip_plane = width * kStripRows;
  std::uint8_t* red = scratch;
  std::uint8_t* green = red + strip_plane;
  std::uint8_t* blue = green + strip_plane;
  std::uint8_t* u_row = blue + strip_plane;
  std::uint8_t* v_row = u_row + width + 2;
  auto* red_term = reinterpret_cast<std::int16_t*>(v_row + width + 2);
  std::int16_t* green_term = red_term + width;
  std::int16_t* blue_term = green_term + width;
  const int phase = x_ & layout.shift_x;  // an odd crop start falls inside a chroma pair
  const int pairs = (width_ + phase + 1) / 2;
  int chroma_done = -1;  // the chroma row whose terms are ready (4:2:0 shares one by two rows)
  for (int strip = first; strip < end; strip += kStripRows) {
    const int rows = std::min(kStripRows, end - strip);
    for (int r = 0; r < rows; ++r) {
      const int source_row = y_ + strip + r, chroma_row = source_row >> layout.shift_y;
      if (chroma_row != chroma_done) {
        const std::uint8_t* u =
            frame.data[1] + static_cast<std::ptrdiff_t>(chroma_row) * frame.linesize[1];
        const std::uint8_t* v =
            frame.data[2] + static_cast<std::ptrdiff_t>(chroma_row) * frame.linesize[2];
        if (layout.shift_x != 0) {
          double_samples(u + (x_ >> 1), pairs, u_row);
          double_samples(v + (x_ >> 1), pairs, v_row);
          u = u_row + phase;
          v = v_row + phase;
        } else {
          u += x_;
          v += x_;
        }
        chroma_terms(u, v, width_, c, red_term, green_term, blue_term);
        chroma_done = chroma_row;
      }
      const std::uint8_t* y =
          frame.data[0] + static_cast<std::ptrdiff_t>(source_row) * frame.linesize[0] + x_;
      const std::size_t offset = static_cast<std::size_t>(r) * width;
      luma_row(y, width_, c, red_term, green_term, blue_term, red + offset, green + offset,
               blue + offset);
    }
    // Interleave the strip with OpenCV's SIMD merge, straight into the caller's buffer.
    const cv::Mat planes[3] = {cv::Mat(rows, width_, CV_8UC1, bgr_ ? blue : red),
                               cv::Mat(rows, width_, CV_8UC1, green),
                               cv::Mat(rows, width_, CV_8UC1, bgr_ ? red : blue)};
    cv::Mat packed(rows, width_, CV_8UC3, out + static_cast<std::size_t>(strip) * stride, stride);
    cv::merge(planes, 3, packed);
  }
}

void FrameConverter::convert_with_swscale(const AVFrame& frame, std::uint8_t* out,
                                          std::size_t stride) {
  const AVPixelFormat target = bgr_ ? AV_PIX_FMT_BGR24 : AV_PIX_FMT_RGB24;
  const auto format = static_cast<AVPixelFormat>(frame.format);
  SwsContext* context =
      sws_getCachedContext(scale_.release(), frame.width, frame.height, format, frame.width,
                           frame.height, target, SWS_BILINEAR, nullptr, nullptr, nullptr);
  scale_.reset(context);
  if (context == nullptr) {
    const char* name = av_get_pix_fmt_name(format);
    throw Error(fmt::format("cannot convert frames in pixel format {} to RGB",
                            name != nullptr ? name : "unknown"),
                "re-encode the video to a common format, e.g. ffmpeg -i in.avi -pix_fmt yuv420p "
                "out.mp4");
  }
  // Use the same matrix and range as the fast path, so that every format reads alike.
  const bool full_range = frame.color_range == AVCOL_RANGE_JPEG;
  const int* table =
      sws_getCoefficients(frame.colorspace == AVCOL_SPC_BT709 ? SWS_CS_ITU709 : SWS_CS_ITU601);
  sws_setColorspaceDetails(context, table, full_range ? 1 : 0, table, 1, 0, 1 << 16, 1 << 16);
  const std::size_t row_bytes = static_cast<std::size_t>(frame.width) * 3;
  scratch_.resize(row_bytes * static_cast<std::size_t>(frame.height));
  std::uint8_t* planes[1] = {scratch_.data()};
  const int strides[1] = {static_cast<int>(row_bytes)};
  sws_scale(context, frame.data, frame.linesize, 0, frame.height, planes, strides);
  for (int row = 0; row < height_; ++row) {
    std::memcpy(out + static_cast<std::size_t>(row) * stride,
                scratch_.data() + static_cast<std::size_t>(y_ + row) * row_bytes +
                    static_cast<std::size_t>(x_) * 3,
                static_cast<std::size_t>(width_) * 3);
  }
}

}  // namespace labpose::pipeline
