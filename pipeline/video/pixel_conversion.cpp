// Frame conversion: fixed-point YUV -> RGB for planar 8-bit YUV, libswscale for the rest.
#include "pipeline/video/pixel_conversion.hpp"

#include <fmt/core.h>
#include <opencv2/core.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "core/error.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LABPOSE_X86_KERNELS 1  // the AVX2 and AVX-512 kernels are compiled in
#include <immintrin.h>
#endif

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
  bool interleaved = false;  // U and V alternate in plane 1 (NV12, what NVDEC gives)
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
    return static_cast<std::int16_t>(std::lround(value * (1 << bits)));
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
// load time. Not under ThreadSanitizer: it instruments the resolver that picks the copy, which
// runs while the program is being loaded, before the sanitizer's runtime is up.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
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
  for (std::ptrdiff_t j = 0; j < pairs; ++j) {
    out[2 * j] = row[j];
    out[2 * j + 1] = row[j];
  }
}

// A one-pass kernel: one row of 4:4:4 samples (chroma already upsampled) to packed bytes.
using RowKernel = void (*)(const std::uint8_t* y, const std::uint8_t* u, const std::uint8_t* v,
                           int width, const YuvCoefficients& c, bool bgr, std::uint8_t* out);

#ifdef LABPOSE_X86_KERNELS

// pshufb masks that interleave 16 R, 16 G and 16 B bytes into 48 packed bytes: output block k
// (bytes 16k..16k+15) takes byte (16k + i) / 3 of plane (16k + i) % 3 at position i; the other
// planes' masks hold 0x80 there (a zero byte), so the three shuffles are OR-ed.
struct InterleaveMasks {
  alignas(32) std::uint8_t bytes[3][3][32];  // [output block][plane][two copies of 16]
};

constexpr InterleaveMasks make_interleave_masks() {
  InterleaveMasks masks{};
  for (int block = 0; block < 3; ++block) {
    for (int plane = 0; plane < 3; ++plane) {
      for (int i = 0; i < 32; ++i) {
        const int at = 16 * block + i % 16;
        masks.bytes[block][plane][i] =
            at % 3 == plane ? static_cast<std::uint8_t>(at / 3) : std::uint8_t{0x80};
      }
    }
  }
  return masks;
}

constexpr InterleaveMasks kInterleave = make_interleave_masks();

// 16 pixels of 16-bit Y, U and V samples to 16-bit R, G and B sums in 1/32 code values, shifted
// down to code values: the arithmetic of chroma_terms and luma_row, lane for lane (the scalar
// casts to int16 are the instructions' wrap-around), so the bytes come out identical.
struct Rgb16 {
  __m256i red, green, blue;
};

__attribute__((target("avx2"))) inline Rgb16 rgb_from_yuv16(__m256i y, __m256i u, __m256i v,
                                                            const YuvCoefficients& c) {
  const __m256i luma = _mm256_add_epi16(
      _mm256_mulhi_epi16(_mm256_slli_epi16(_mm256_sub_epi16(y, _mm256_set1_epi16(c.y_offset)), 7),
                         _mm256_set1_epi16(c.luma)),
      _mm256_set1_epi16(1 << (kResultBits - 1)));
  const __m256i half = _mm256_set1_epi16(128);
  const __m256i cb = _mm256_slli_epi16(_mm256_sub_epi16(u, half), 8);
  const __m256i cr = _mm256_slli_epi16(_mm256_sub_epi16(v, half), 8);
  const __m256i red = _mm256_mulhi_epi16(cr, _mm256_set1_epi16(c.red_v));
  const __m256i green =
      _mm256_sub_epi16(_mm256_sub_epi16(_mm256_setzero_si256(),
                                        _mm256_mulhi_epi16(cb, _mm256_set1_epi16(c.green_u))),
                       _mm256_mulhi_epi16(cr, _mm256_set1_epi16(c.green_v)));
  const __m256i blue = _mm256_mulhi_epi16(cb, _mm256_set1_epi16(c.blue_u));
  return {_mm256_srai_epi16(_mm256_add_epi16(luma, red), kResultBits),
          _mm256_srai_epi16(_mm256_add_epi16(luma, green), kResultBits),
          _mm256_srai_epi16(_mm256_add_epi16(luma, blue), kResultBits)};
}

// Two halves of 16 pixels to 32 saturated bytes in pixel order (packus interleaves the lanes).
__attribute__((target("avx2"))) inline __m256i pack_bytes(__m256i low, __m256i high) {
  return _mm256_permute4x64_epi64(_mm256_packus_epi16(low, high), 0xD8);
}

__attribute__((target("avx2"))) inline __m256i widen_16(const std::uint8_t* bytes) {
  return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes)));
}

__attribute__((target("avx2"))) inline __m256i interleave_mask(int block, int plane) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(kInterleave.bytes[block][plane]));
}

// 32 pixels of one 4:4:4 row (Y, U, V bytes) to 96 bytes of packed RGB (BGR when `bgr`).
__attribute__((target("avx2"))) inline void packed_32(const std::uint8_t* y, const std::uint8_t* u,
                                                      const std::uint8_t* v,
                                                      const YuvCoefficients& c, bool bgr,
                                                      std::uint8_t* out) {
  const Rgb16 low = rgb_from_yuv16(widen_16(y), widen_16(u), widen_16(v), c);
  const Rgb16 high = rgb_from_yuv16(widen_16(y + 16), widen_16(u + 16), widen_16(v + 16), c);
  const __m256i red = pack_bytes(low.red, high.red);
  const __m256i green = pack_bytes(low.green, high.green);
  const __m256i blue = pack_bytes(low.blue, high.blue);
  const __m256i first = bgr ? blue : red, last = bgr ? red : blue;
  // Each 128-bit lane holds 16 pixels; shuffles stay inside lanes, so each lane gives 48 bytes.
  for (int block = 0; block < 3; ++block) {
    const __m256i packed =
        _mm256_or_si256(_mm256_or_si256(_mm256_shuffle_epi8(first, interleave_mask(block, 0)),
                                        _mm256_shuffle_epi8(green, interleave_mask(block, 1))),
                        _mm256_shuffle_epi8(last, interleave_mask(block, 2)));
    const std::ptrdiff_t offset = 16 * static_cast<std::ptrdiff_t>(block);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + offset), _mm256_castsi256_si128(packed));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 48 + offset),
                     _mm256_extracti128_si256(packed, 1));
  }
}

// The last `rest` pixels of a row (fewer than kStep) through zero-padded copies, so that they take
// the same instructions as the others. `step` converts kStep pixels.
using StepKernel = void (*)(const std::uint8_t* y, const std::uint8_t* u, const std::uint8_t* v,
                            const YuvCoefficients& c, bool bgr, std::uint8_t* out);

template <std::size_t kStep>
void padded_tail(StepKernel step, const std::uint8_t* y, const std::uint8_t* u,
                 const std::uint8_t* v, std::size_t rest, const YuvCoefficients& c, bool bgr,
                 std::uint8_t* out) {
  std::uint8_t ys[kStep] = {}, us[kStep] = {}, vs[kStep] = {}, packed[3 * kStep];
  std::memcpy(ys, y, rest);
  std::memcpy(us, u, rest);
  std::memcpy(vs, v, rest);
  step(ys, us, vs, c, bgr, packed);
  std::memcpy(out, packed, 3 * rest);
}

// One row of 4:4:4 samples (chroma already upsampled) straight to packed RGB or BGR bytes, in one
// pass instead of chroma_terms, luma_row and a merge.
__attribute__((target("avx2"))) void packed_row_avx2(const std::uint8_t* y, const std::uint8_t* u,
                                                     const std::uint8_t* v, int width,
                                                     const YuvCoefficients& c, bool bgr,
                                                     std::uint8_t* out) {
  std::ptrdiff_t i = 0;
  for (; i + 32 <= width; i += 32) packed_32(y + i, u + i, v + i, c, bgr, out + 3 * i);
  if (i < width) {
    padded_tail<32>(packed_32, y + i, u + i, v + i, static_cast<std::size_t>(width - i), c, bgr,
                    out + 3 * i);
  }
}

// The AVX-512 kernel: 64 pixels per step. Bytes are widened by unpacking them with zeros inside
// each 128-bit lane (which packus undoes, so the pixels need no reordering); (U - 128) << 8 is U
// with its top bit flipped, unpacked as the high byte. Then the arithmetic of rgb_from_yuv16 and
// two VBMI byte permutes per 64 output bytes to interleave the planes.
struct PermuteTables {
  alignas(64) std::uint8_t first_two[3][64];  // output block -> byte of (first plane, green)
  alignas(64) std::uint8_t last[3][64];       // output block -> byte of the last plane
  std::uint64_t last_mask[3];                 // output bytes taken from the last plane
};

constexpr PermuteTables make_permute_tables() {
  PermuteTables tables{};
  for (int block = 0; block < 3; ++block) {
    for (int i = 0; i < 64; ++i) {
      const int at = 64 * block + i, plane = at % 3, pixel = at / 3;
      tables.first_two[block][i] = static_cast<std::uint8_t>(plane == 1 ? 64 + pixel : pixel);
      tables.last[block][i] = static_cast<std::uint8_t>(pixel);
      if (plane == 2) tables.last_mask[block] |= std::uint64_t{1} << i;
    }
  }
  return tables;
}

constexpr PermuteTables kPermute = make_permute_tables();

#define LABPOSE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vbmi")))

LABPOSE_AVX512 inline __m512i sums_to_bytes(__m512i luma, __m512i term) {
  return _mm512_srai_epi16(_mm512_add_epi16(luma, term), kResultBits);
}

// 64 pixels of one 4:4:4 row to 192 bytes of packed RGB (BGR when `bgr`).
LABPOSE_AVX512 inline void packed_64(const std::uint8_t* y, const std::uint8_t* u,
                                     const std::uint8_t* v, const YuvCoefficients& c, bool bgr,
                                     std::uint8_t* out) {
  const __m512i zero = _mm512_setzero_si512(), flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i luma_bytes = _mm512_loadu_si512(y);
  const __m512i u_bytes = _mm512_xor_si512(_mm512_loadu_si512(u), flip);
  const __m512i v_bytes = _mm512_xor_si512(_mm512_loadu_si512(v), flip);
  const __m512i offset = _mm512_set1_epi16(c.y_offset), scale = _mm512_set1_epi16(c.luma);
  const __m512i round = _mm512_set1_epi16(1 << (kResultBits - 1));
  const __m512i red_v = _mm512_set1_epi16(c.red_v), blue_u = _mm512_set1_epi16(c.blue_u);
  const __m512i green_u = _mm512_set1_epi16(c.green_u), green_v = _mm512_set1_epi16(c.green_v);
  __m512i planes[2][3];  // [low, high half of each lane][red, green, blue]
  for (int half = 0; half < 2; ++half) {
    const __m512i luma16 =
        half == 0 ? _mm512_unpacklo_epi8(luma_bytes, zero) : _mm512_unpackhi_epi8(luma_bytes, zero);
    const __m512i cb =
        half == 0 ? _mm512_unpacklo_epi8(zero, u_bytes) : _mm512_unpackhi_epi8(zero, u_bytes);
    const __m512i cr =
        half == 0 ? _mm512_unpacklo_epi8(zero, v_bytes) : _mm512_unpackhi_epi8(zero, v_bytes);
    const __m512i luma = _mm512_add_epi16(
        _mm512_mulhi_epi16(_mm512_slli_epi16(_mm512_sub_epi16(luma16, offset), 7), scale), round);
    const __m512i green = _mm512_sub_epi16(_mm512_sub_epi16(zero, _mm512_mulhi_epi16(cb, green_u)),
                                           _mm512_mulhi_epi16(cr, green_v));
    planes[half][0] = sums_to_bytes(luma, _mm512_mulhi_epi16(cr, red_v));
    planes[half][1] = sums_to_bytes(luma, green);
    planes[half][2] = sums_to_bytes(luma, _mm512_mulhi_epi16(cb, blue_u));
  }
  const __m512i red = _mm512_packus_epi16(planes[0][0], planes[1][0]);
  const __m512i green = _mm512_packus_epi16(planes[0][1], planes[1][1]);
  const __m512i blue = _mm512_packus_epi16(planes[0][2], planes[1][2]);
  const __m512i first = bgr ? blue : red, last = bgr ? red : blue;
  for (int block = 0; block < 3; ++block) {
    const __m512i two =
        _mm512_permutex2var_epi8(first, _mm512_load_si512(kPermute.first_two[block]), green);
    const __m512i all = _mm512_mask_permutexvar_epi8(two, kPermute.last_mask[block],
                                                     _mm512_load_si512(kPermute.last[block]), last);
    _mm512_storeu_si512(out + 64 * static_cast<std::ptrdiff_t>(block), all);
  }
}

LABPOSE_AVX512 void packed_row_avx512(const std::uint8_t* y, const std::uint8_t* u,
                                      const std::uint8_t* v, int width, const YuvCoefficients& c,
                                      bool bgr, std::uint8_t* out) {
  std::ptrdiff_t i = 0;
  for (; i + 64 <= width; i += 64) packed_64(y + i, u + i, v + i, c, bgr, out + 3 * i);
  if (i < width) {
    padded_tail<64>(packed_64, y + i, u + i, v + i, static_cast<std::size_t>(width - i), c, bgr,
                    out + 3 * i);
  }
}
#undef LABPOSE_AVX512

RowKernel row_kernel(ConversionKernel kernel) {
  switch (kernel) {
    case ConversionKernel::avx512:
      return packed_row_avx512;
    case ConversionKernel::avx2:
      return packed_row_avx2;
    default:
      return nullptr;
  }
}

#else
RowKernel row_kernel(ConversionKernel) {
  return nullptr;
}
#endif

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
    case AV_PIX_FMT_NV12:
      return YuvLayout{1, 1, false, true};
    default:
      return std::nullopt;
  }
}

}  // namespace

bool conversion_kernel_available(ConversionKernel kernel) {
  switch (kernel) {
#ifdef LABPOSE_X86_KERNELS
    case ConversionKernel::avx512:
      return __builtin_cpu_supports("avx512bw") != 0 && __builtin_cpu_supports("avx512vbmi") != 0;
    case ConversionKernel::avx2:
      return __builtin_cpu_supports("avx2") != 0;
#else
    case ConversionKernel::avx512:
    case ConversionKernel::avx2:
      return false;
#endif
    default:
      return true;
  }
}

FrameConverter::FrameConverter(int x, int y, int width, int height, bool bgr,
                               ConversionKernel kernel)
    : x_(x), y_(y), width_(width), height_(height), bgr_(bgr), kernel_(kernel) {
  LABPOSE_ASSERT(x >= 0 && y >= 0 && width > 0 && height > 0);
  LABPOSE_ASSERT(conversion_kernel_available(kernel));
  if (kernel_ == ConversionKernel::fastest) {
    kernel_ = ConversionKernel::portable;
    for (const ConversionKernel k : {ConversionKernel::avx512, ConversionKernel::avx2}) {
      if (conversion_kernel_available(k)) {
        kernel_ = k;
        break;
      }
    }
  }
  // Three byte planes of one strip (small enough to stay in cache until merged), two rows of
  // upsampled chroma (with a sample to spare), three rows of chroma terms, and the U and V rows
  // of interleaved chroma taken apart.
  const auto w = static_cast<std::size_t>(width);
  scratch_bytes_ = 3 * w * kStripRows + 2 * (w + 2) + 3 * w * sizeof(std::int16_t) + 2 * (w + 2);
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
  scratch_.resize(scratch_bytes_);
  convert_rows(frame, *layout, c, out, stride);
}

void FrameConverter::convert_rows(const AVFrame& frame, const YuvLayout& layout,
                                  const YuvCoefficients& c, std::uint8_t* out, std::size_t stride) {
  const RowKernel packed_row = row_kernel(kernel_);
  std::uint8_t* scratch = scratch_.data();
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
  auto* u_apart = reinterpret_cast<std::uint8_t*>(blue_term + width);
  std::uint8_t* v_apart = u_apart + width + 2;
  const int phase = x_ & layout.shift_x;  // an odd crop start falls inside a chroma pair
  const int pairs = (width_ + phase + 1) / 2;
  int chroma_done = -1;  // the chroma row in u, v (4:2:0 shares one by two rows)
  const std::uint8_t* u = nullptr;
  const std::uint8_t* v = nullptr;
  for (int strip = 0; strip < height_; strip += kStripRows) {
    const int rows = std::min(kStripRows, height_ - strip);
    for (int r = 0; r < rows; ++r) {
      const int source_row = y_ + strip + r, chroma_row = source_row >> layout.shift_y;
      if (chroma_row != chroma_done) {
        u = frame.data[1] + static_cast<std::ptrdiff_t>(chroma_row) * frame.linesize[1];
        v = layout.interleaved
                ? nullptr
                : frame.data[2] + static_cast<std::ptrdiff_t>(chroma_row) * frame.linesize[2];
        if (layout.interleaved) {  // always subsampled across: the pairs the region needs
          const std::uint8_t* both = u + 2 * static_cast<std::ptrdiff_t>(x_ >> 1);
          for (int i = 0; i < pairs; ++i) {
            u_apart[i] = both[2 * i];
            v_apart[i] = both[2 * i + 1];
          }
          double_samples(u_apart, pairs, u_row);
          double_samples(v_apart, pairs, v_row);
          u = u_row + phase;
          v = v_row + phase;
        } else if (layout.shift_x != 0) {
          double_samples(u + (x_ >> 1), pairs, u_row);
          double_samples(v + (x_ >> 1), pairs, v_row);
          u = u_row + phase;
          v = v_row + phase;
        } else {
          u += x_;
          v += x_;
        }
        if (packed_row == nullptr) chroma_terms(u, v, width_, c, red_term, green_term, blue_term);
        chroma_done = chroma_row;
      }
      const std::uint8_t* y =
          frame.data[0] + static_cast<std::ptrdiff_t>(source_row) * frame.linesize[0] + x_;
      if (packed_row != nullptr) {
        packed_row(y, u, v, width_, c, bgr_, out + static_cast<std::size_t>(strip + r) * stride);
        continue;
      }
      const std::size_t offset = static_cast<std::size_t>(r) * width;
      luma_row(y, width_, c, red_term, green_term, blue_term, red + offset, green + offset,
               blue + offset);
    }
    if (packed_row != nullptr) continue;
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
