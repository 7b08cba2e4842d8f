// PNG with libpng, JPEG with libjpeg-turbo. Both libraries report errors by longjmp: every call
// into them happens in a function that sets the jump point and holds no object with a destructor,
// and returns false with the library's words; the caller, holding the libraries' state in RAII
// owners, turns that into an Error.
#include "pipeline/images/image_files.hpp"

#include <fmt/core.h>
#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <opencv2/core.hpp>
#include <vector>

// jerror.h after jpeglib.h, which it needs.
#include <jerror.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

// 8192 x 8192: no frame of a lab video comes near this (4K is an eighth of it). A damaged or
// hostile header that declares more is refused before its pixels (200 MB here) are allocated.
constexpr std::uint64_t kMaxPixels = std::uint64_t{1} << 26;

constexpr const char* kDamagedHint =
    "the image file is damaged or was cut short: restore it from a backup, or extract the frame "
    "again";

constexpr std::string_view kPngSignature{"\x89PNG\r\n\x1a\n", 8};

bool is_png(std::string_view bytes) {
  return bytes.starts_with(kPngSignature);
}
bool is_jpeg(std::string_view bytes) {
  return bytes.starts_with("\xff\xd8\xff");
}

// Where a library's error jumps back to, and its words.
struct Failure {
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX + 64] = {};
};

// The decoded image's size, as the library will deliver it.
struct Shape {
  std::uint32_t width = 0, height = 0, channels = 0;
};

bool too_large(const Shape& shape, Failure& failure) {
  if (std::uint64_t{shape.width} * shape.height <= kMaxPixels) return false;
  std::snprintf(failure.message, sizeof failure.message,
                "it declares %u x %u pixels, more than labpose reads (%llu)", shape.width,
                shape.height, static_cast<unsigned long long>(kMaxPixels));
  return true;
}

std::vector<unsigned char*> row_pointers(cv::Mat& image) {
  std::vector<unsigned char*> rows(static_cast<std::size_t>(image.rows));
  for (int row = 0; row < image.rows; ++row) rows[static_cast<std::size_t>(row)] = image.ptr(row);
  return rows;
}

// ---- PNG ----

[[noreturn]] void png_failed(png_structp png, png_const_charp message) {
  auto* failure = static_cast<Failure*>(png_get_error_ptr(png));
  std::snprintf(failure->message, sizeof failure->message, "%s", message);
  std::longjmp(failure->jump, 1);
}

// libpng's warnings (a damaged ancillary chunk, say) leave the pixels whole, and OpenCV reads past
// them too.
void png_warned(png_structp, png_const_charp) {}

struct PngInput {
  const unsigned char* data = nullptr;
  std::size_t size = 0, at = 0;
};

void png_read_bytes(png_structp png, png_bytep out, std::size_t count) {
  auto* input = static_cast<PngInput*>(png_get_io_ptr(png));
  if (input->size - input->at < count) png_error(png, "the file ends before the image does");
  std::memcpy(out, input->data + input->at, count);
  input->at += count;
}

// libpng's state for reading or for writing one image, and where its errors jump.
class Png {
 public:
  enum class Direction { read, write };
  explicit Png(Direction direction) : direction_(direction) {
    png_ = direction == Direction::read
               ? png_create_read_struct(PNG_LIBPNG_VER_STRING, &failure_, png_failed, png_warned)
               : png_create_write_struct(PNG_LIBPNG_VER_STRING, &failure_, png_failed, png_warned);
    if (png_ != nullptr) info_ = png_create_info_struct(png_);
    if (info_ == nullptr) {
      destroy();
      throw std::bad_alloc();
    }
  }
  ~Png() { destroy(); }
  Png(const Png&) = delete;
  Png& operator=(const Png&) = delete;

  png_structp png() { return png_; }
  png_infop info() { return info_; }
  Failure& failure() { return failure_; }

 private:
  void destroy() {
    if (direction_ == Direction::read) {
      png_destroy_read_struct(&png_, &info_, nullptr);
    } else {
      png_destroy_write_struct(&png_, &info_);
    }
  }

  Direction direction_;
  Failure failure_;
  png_structp png_ = nullptr;
  png_infop info_ = nullptr;
};

// Reads the header and asks for 8-bit colour as OpenCV's IMREAD_COLOR does.
bool png_start(png_structp png, png_infop info, Failure& failure, PngInput& input, bool bgr,
               Shape& shape) {
  if (setjmp(failure.jump) != 0) return false;
  png_set_read_fn(png, &input, png_read_bytes);
  png_read_info(png, info);
  const int type = png_get_color_type(png, info);
  png_set_strip_alpha(png);
  png_set_strip_16(png);
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if ((type & PNG_COLOR_MASK_COLOR) == 0) {
    png_set_expand_gray_1_2_4_to_8(png);
    png_set_gray_to_rgb(png);
  }
  if (bgr) png_set_bgr(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  shape = {png_get_image_width(png, info), png_get_image_height(png, info),
           png_get_channels(png, info)};
  return !too_large(shape, failure);
}

bool png_pixels(png_structp png, png_infop info, Failure& failure, unsigned char** rows) {
  if (setjmp(failure.jump) != 0) return false;
  png_read_image(png, rows);
  png_read_end(png, info);
  return true;
}

cv::Mat decode_png(std::string_view bytes, const std::string& name, ChannelOrder order) {
  Png reading(Png::Direction::read);
  PngInput input{reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), 0};
  Shape shape;
  const auto refused = [&] {
    return Error(fmt::format("cannot read the PNG image {}: {}", name, reading.failure().message),
                 kDamagedHint);
  };
  if (!png_start(reading.png(), reading.info(), reading.failure(), input,
                 order == ChannelOrder::bgr, shape)) {
    throw refused();
  }
  LABPOSE_ASSERT(shape.channels == 3);
  cv::Mat image(static_cast<int>(shape.height), static_cast<int>(shape.width), CV_8UC3);
  std::vector<unsigned char*> rows = row_pointers(image);
  if (!png_pixels(reading.png(), reading.info(), reading.failure(), rows.data())) throw refused();
  return image;
}

struct PngOutput {
  std::string bytes;
  bool out_of_memory = false;
};

void png_write_bytes(png_structp png, png_bytep data, std::size_t count) {
  auto* output = static_cast<PngOutput*>(png_get_io_ptr(png));
  try {
    output->bytes.append(reinterpret_cast<const char*>(data), count);
  } catch (const std::bad_alloc&) {
    output->out_of_memory = true;
  }
  if (output->out_of_memory) png_error(png, "out of memory");
}

void png_flush(png_structp) {}

bool png_encode(png_structp png, png_infop info, Failure& failure, PngOutput& output,
                const Shape& shape, bool bgr, unsigned char** rows) {
  if (setjmp(failure.jump) != 0) return false;
  png_set_write_fn(png, &output, png_write_bytes, png_flush);
  png_set_IHDR(png, info, shape.width, shape.height, 8,
               shape.channels == 1 ? PNG_COLOR_TYPE_GRAY : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
  png_set_compression_level(png, Z_BEST_SPEED);
  png_set_compression_strategy(png, Z_RLE);
  png_write_info(png, info);
  if (bgr) png_set_bgr(png);
  png_write_image(png, rows);
  png_write_end(png, info);
  return true;
}

// ---- JPEG ----

// libjpeg finds its error manager through the decompressor's `err`: the manager comes first.
struct JpegErrors {
  jpeg_error_mgr manager;
  Failure failure;
  bool truncated = false;
};

[[noreturn]] void jpeg_failed(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  info->err->format_message(info, errors->failure.message);
  std::longjmp(errors->failure.jump, 1);
}

// Warnings about damaged data are ignored as OpenCV ignores them, except the one that says the file
// ended early: the rows after that point would be grey.
void jpeg_warned(j_common_ptr info, int level) {
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) {
    reinterpret_cast<JpegErrors*>(info->err)->truncated = true;
  }
}

// libjpeg's error manager in `errors`, reporting through the two functions above.
jpeg_error_mgr* jpeg_errors(JpegErrors& errors) {
  jpeg_error_mgr* manager = jpeg_std_error(&errors.manager);
  manager->error_exit = jpeg_failed;
  manager->emit_message = jpeg_warned;
  return manager;
}

class JpegReading {
 public:
  JpegReading() {
    std::memset(&info_, 0, sizeof info_);
    info_.err = jpeg_errors(errors_);
  }
  ~JpegReading() { jpeg_destroy_decompress(&info_); }
  JpegReading(const JpegReading&) = delete;
  JpegReading& operator=(const JpegReading&) = delete;

  jpeg_decompress_struct& info() { return info_; }
  JpegErrors& errors() { return errors_; }

 private:
  JpegErrors errors_;
  jpeg_decompress_struct info_;
};

bool jpeg_start(jpeg_decompress_struct& info, JpegErrors& errors, std::string_view bytes, bool bgr,
                Shape& shape) {
  if (setjmp(errors.failure.jump) != 0) return false;
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
    std::snprintf(errors.failure.message, sizeof errors.failure.message,
                  "it is a CMYK JPEG; labpose reads RGB and greyscale ones");
    return false;
  }
  shape = {info.image_width, info.image_height, 3};
  if (too_large(shape, errors.failure)) return false;
  info.out_color_space = bgr ? JCS_EXT_BGR : JCS_EXT_RGB;
  jpeg_start_decompress(&info);
  shape = {info.output_width, info.output_height,
           static_cast<std::uint32_t>(info.output_components)};
  return true;
}

bool jpeg_pixels(jpeg_decompress_struct& info, JpegErrors& errors, unsigned char** rows) {
  if (setjmp(errors.failure.jump) != 0) return false;
  while (info.output_scanline < info.output_height) {
    jpeg_read_scanlines(&info, rows + info.output_scanline,
                        info.output_height - info.output_scanline);
  }
  jpeg_finish_decompress(&info);
  return true;
}

cv::Mat decode_jpeg(std::string_view bytes, const std::string& name, ChannelOrder order) {
  JpegReading reading;
  Shape shape;
  const auto refused = [&] {
    return Error(
        fmt::format("cannot read the JPEG image {}: {}", name, reading.errors().failure.message),
        kDamagedHint);
  };
  if (!jpeg_start(reading.info(), reading.errors(), bytes, order == ChannelOrder::bgr, shape)) {
    throw refused();
  }
  LABPOSE_ASSERT(shape.channels == 3);
  cv::Mat image(static_cast<int>(shape.height), static_cast<int>(shape.width), CV_8UC3);
  std::vector<unsigned char*> rows = row_pointers(image);
  if (!jpeg_pixels(reading.info(), reading.errors(), rows.data())) throw refused();
  if (reading.errors().truncated) {
    throw Error(
        fmt::format("cannot read the JPEG image {}: the file ends before the image does", name),
        kDamagedHint);
  }
  return image;
}

class JpegWriting {
 public:
  JpegWriting() {
    std::memset(&info_, 0, sizeof info_);
    info_.err = jpeg_errors(errors_);
  }
  ~JpegWriting() {
    jpeg_destroy_compress(&info_);
    std::free(buffer_);  // jpeg_mem_dest's, allocated with malloc
  }
  JpegWriting(const JpegWriting&) = delete;
  JpegWriting& operator=(const JpegWriting&) = delete;

  jpeg_compress_struct& info() { return info_; }
  JpegErrors& errors() { return errors_; }
  unsigned char*& buffer() { return buffer_; }
  unsigned long& size() { return size_; }

 private:
  JpegErrors errors_;
  jpeg_compress_struct info_;
  unsigned char* buffer_ = nullptr;
  unsigned long size_ = 0;
};

bool jpeg_encode(JpegWriting& writing, const Shape& shape, bool bgr, int quality,
                 unsigned char** rows) {
  jpeg_compress_struct& info = writing.info();
  if (setjmp(writing.errors().failure.jump) != 0) return false;
  jpeg_create_compress(&info);
  jpeg_mem_dest(&info, &writing.buffer(), &writing.size());
  info.image_width = shape.width;
  info.image_height = shape.height;
  info.input_components = static_cast<int>(shape.channels);
  info.in_color_space = shape.channels == 1 ? JCS_GRAYSCALE : bgr ? JCS_EXT_BGR : JCS_EXT_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    jpeg_write_scanlines(&info, rows + info.next_scanline, info.image_height - info.next_scanline);
  }
  jpeg_finish_compress(&info);
  return true;
}

// The shape of an image to encode: 8-bit, 1 or 3 channels.
Shape encodable(const cv::Mat& image, const char* format) {
  if (image.depth() != CV_8U || (image.channels() != 1 && image.channels() != 3) || image.empty()) {
    throw Error(
        fmt::format("cannot encode a {}x{} image with {} channels of depth {} as {}: "
                    "labpose writes 8-bit grey or colour images",
                    image.cols, image.rows, image.channels(), image.depth(), format));
  }
  return {static_cast<std::uint32_t>(image.cols), static_cast<std::uint32_t>(image.rows),
          static_cast<std::uint32_t>(image.channels())};
}

}  // namespace

cv::Mat decode_image(std::string_view bytes, const std::string& name, ChannelOrder order) {
  if (is_png(bytes)) return decode_png(bytes, name, order);
  if (is_jpeg(bytes)) return decode_jpeg(bytes, name, order);
  throw Error(fmt::format("cannot read the image {}: it is neither a PNG nor a JPEG file{}", name,
                          bytes.empty() ? " (it is empty)" : ""),
              "labpose reads frames as PNG or JPEG files, as DeepLabCut extracts them; convert "
              "the image (for example with ffmpeg -i FILE FILE.png), or extract the frame again");
}

cv::Mat read_image(const std::filesystem::path& file, ChannelOrder order) {
  std::error_code error;
  if (!std::filesystem::exists(file, error)) {
    throw Error(fmt::format("cannot read the image {}: it does not exist", file.string()),
                "restore the image, or make the training set again without it");
  }
  return decode_image(read_file(file), file.string(), order);
}

std::string encode_png(const cv::Mat& image, ChannelOrder order) {
  const Shape shape = encodable(image, "PNG");
  cv::Mat source = image;  // the rows are only read: libpng's API is not const
  std::vector<unsigned char*> rows = row_pointers(source);
  Png writing(Png::Direction::write);
  PngOutput output;
  if (!png_encode(writing.png(), writing.info(), writing.failure(), output, shape,
                  order == ChannelOrder::bgr && shape.channels == 3, rows.data())) {
    if (output.out_of_memory) throw std::bad_alloc();
    throw Error(fmt::format("cannot encode a {}x{} image as PNG: {}", shape.width, shape.height,
                            writing.failure().message));
  }
  return std::move(output.bytes);
}

std::string encode_jpeg(const cv::Mat& image, ChannelOrder order, int quality) {
  LABPOSE_ASSERT(quality >= 1 && quality <= 100);
  const Shape shape = encodable(image, "JPEG");
  cv::Mat source = image;
  std::vector<unsigned char*> rows = row_pointers(source);
  JpegWriting writing;
  if (!jpeg_encode(writing, shape, order == ChannelOrder::bgr, quality, rows.data())) {
    throw Error(fmt::format("cannot encode a {}x{} image as JPEG: {}", shape.width, shape.height,
                            writing.errors().failure.message));
  }
  return {reinterpret_cast<const char*>(writing.buffer()), writing.size()};
}

}  // namespace labpose::pipeline
