// The project's image files against OpenCV's own codecs (what DeepLabCut reads and writes them
// with), the oracle here: the same pixels from every kind of PNG and JPEG OpenCV writes, files
// OpenCV reads back exactly, and damaged files refused with the file's name.
#include "pipeline/images/image_files.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::pipeline {
namespace {

cv::Mat random_image(int rows, int cols, int type, unsigned seed) {
  cv::Mat image(rows, cols, type);
  cv::RNG random(seed);
  random.fill(image, cv::RNG::UNIFORM, 0, CV_MAT_DEPTH(type) == CV_16U ? 65536 : 256);
  // A smooth part as well: JPEG's and PNG's filters meet both kinds of content.
  cv::GaussianBlur(image(cv::Rect(0, 0, cols / 2, rows)), image(cv::Rect(0, 0, cols / 2, rows)),
                   {7, 7}, 3);
  return image;
}

std::string opencv_encoded(const cv::Mat& image, const std::string& extension,
                           const std::vector<int>& parameters = {}) {
  std::vector<unsigned char> bytes;
  EXPECT_TRUE(cv::imencode(extension, image, bytes, parameters));
  return {bytes.begin(), bytes.end()};
}

cv::Mat opencv_decoded(const std::string& bytes, int flags = cv::IMREAD_COLOR) {
  return cv::imdecode(std::vector<unsigned char>(bytes.begin(), bytes.end()), flags);
}

bool same(const cv::Mat& a, const cv::Mat& b) {
  return a.size() == b.size() && a.type() == b.type() && cv::norm(a, b, cv::NORM_INF) == 0;
}

cv::Mat swapped(const cv::Mat& image) {
  cv::Mat other;
  cv::cvtColor(image, other, cv::COLOR_BGR2RGB);
  return other;
}

TEST(ImageFiles, ReadsEveryKindOfPngAndJpegOpenCvWritesAsOpenCvDoes) {
  const std::vector<std::pair<std::string, std::string>> files = {
      {"8-bit colour PNG", opencv_encoded(random_image(23, 37, CV_8UC3, 1), ".png")},
      {"colour and alpha PNG", opencv_encoded(random_image(23, 37, CV_8UC4, 2), ".png")},
      {"grey PNG", opencv_encoded(random_image(23, 37, CV_8UC1, 3), ".png")},
      {"16-bit colour PNG", opencv_encoded(random_image(23, 37, CV_16UC3, 4), ".png")},
      {"16-bit grey PNG", opencv_encoded(random_image(23, 37, CV_16UC1, 5), ".png")},
      {"best-compressed PNG",
       opencv_encoded(random_image(23, 37, CV_8UC3, 6), ".png", {cv::IMWRITE_PNG_COMPRESSION, 9})},
      {"colour JPEG", opencv_encoded(random_image(48, 64, CV_8UC3, 7), ".jpg")},
      {"grey JPEG", opencv_encoded(random_image(48, 64, CV_8UC1, 8), ".jpg")},
      {"progressive JPEG of odd size",
       opencv_encoded(random_image(33, 65, CV_8UC3, 9), ".jpg", {cv::IMWRITE_JPEG_PROGRESSIVE, 1})},
  };
  for (const auto& [kind, bytes] : files) {
    const cv::Mat expected = opencv_decoded(bytes);
    ASSERT_FALSE(expected.empty()) << kind;
    EXPECT_TRUE(same(decode_image(bytes, kind, ChannelOrder::bgr), expected)) << kind;
    EXPECT_TRUE(same(decode_image(bytes, kind, ChannelOrder::rgb), swapped(expected))) << kind;
  }
}

TEST(ImageFiles, WritesPngsThatOpenCvReadsBackExactly) {
  const cv::Mat colour = random_image(31, 45, CV_8UC3, 11);
  const std::string png = encode_png(colour, ChannelOrder::bgr);
  EXPECT_TRUE(same(opencv_decoded(png), colour));
  EXPECT_TRUE(same(decode_image(png, "png", ChannelOrder::bgr), colour));
  // OpenCV's default settings for speed: the same bytes as its own encoder.
  EXPECT_EQ(png, opencv_encoded(colour, ".png"));
  // RGB in, the same file as its BGR.
  EXPECT_EQ(encode_png(swapped(colour), ChannelOrder::rgb), png);
  // A view into a larger image (rows apart in memory) and a grey image.
  const cv::Mat view = colour(cv::Rect(3, 2, 20, 17));
  EXPECT_TRUE(same(opencv_decoded(encode_png(view, ChannelOrder::bgr)), view));
  const cv::Mat grey = random_image(9, 14, CV_8UC1, 12);
  EXPECT_TRUE(
      same(opencv_decoded(encode_png(grey, ChannelOrder::bgr), cv::IMREAD_UNCHANGED), grey));
}

TEST(ImageFiles, WritesJpegsAsOpenCvDoesAtTheSameQuality) {
  const cv::Mat colour = random_image(40, 56, CV_8UC3, 13);
  const std::string jpeg = encode_jpeg(colour, ChannelOrder::bgr, 90);
  EXPECT_EQ(jpeg, opencv_encoded(colour, ".jpg", {cv::IMWRITE_JPEG_QUALITY, 90}));
  EXPECT_EQ(encode_jpeg(swapped(colour), ChannelOrder::rgb, 90), jpeg);
  const cv::Mat decoded = decode_image(jpeg, "jpeg", ChannelOrder::bgr);
  EXPECT_TRUE(same(decoded, opencv_decoded(jpeg)));
  const cv::Rect smooth(0, 0, colour.cols / 2, colour.rows);  // the noise half keeps less
  EXPECT_GT(cv::PSNR(decoded(smooth), colour(smooth)), 30.0);
}

// A PNG whose header declares `width` x `height`, its CRC made right.
std::string png_declaring(std::uint32_t width, std::uint32_t height) {
  std::string png = opencv_encoded(random_image(4, 4, CV_8UC3, 14), ".png");
  const auto put = [&](std::size_t at, std::uint32_t value) {
    for (int byte = 0; byte < 4; ++byte) {
      png[at + static_cast<std::size_t>(byte)] = static_cast<char>(value >> (24 - 8 * byte));
    }
  };
  put(16, width);  // after the signature (8), the chunk's length (4) and "IHDR" (4)
  put(20, height);
  put(29, static_cast<std::uint32_t>(
              crc32(0, reinterpret_cast<const unsigned char*>(png.data()) + 12, 17)));
  return png;
}

TEST(ImageFiles, DamagedFilesAreRefusedWithTheirNameAndWhy) {
  const std::string png = opencv_encoded(random_image(64, 64, CV_8UC3, 15), ".png");
  const std::string jpeg = opencv_encoded(random_image(64, 64, CV_8UC3, 16), ".jpg");
  const auto error = [](const std::string& bytes) {
    return testing::error_text(
        [&] { decode_image(bytes, "labeled-data/m/img7.png", ChannelOrder::bgr); });
  };
  const std::string cut_png = error(png.substr(0, png.size() / 2));
  EXPECT_TRUE(testing::contains(cut_png, "cannot read the PNG image labeled-data/m/img7.png: "))
      << cut_png;
  EXPECT_TRUE(testing::contains(cut_png, "hint: the image file is damaged or was cut short"))
      << cut_png;
  const std::string cut_jpeg = error(jpeg.substr(0, jpeg.size() / 2));
  EXPECT_TRUE(testing::contains(cut_jpeg,
                                "JPEG image labeled-data/m/img7.png: the file ends "
                                "before the image does"))
      << cut_jpeg;
  std::string flipped = png;
  flipped[png.size() / 2] = static_cast<char>(flipped[png.size() / 2] ^ 0x55);
  EXPECT_TRUE(testing::contains(error(flipped), "cannot read the PNG image")) << error(flipped);
  const std::string huge = error(png_declaring(100000, 100000));
  EXPECT_TRUE(
      testing::contains(huge, "it declares 100000 x 100000 pixels, more than labpose reads"))
      << huge;
  EXPECT_TRUE(testing::contains(error("GIF89a......"), "it is neither a PNG nor a JPEG file"));
  EXPECT_TRUE(testing::contains(error(""), "neither a PNG nor a JPEG file (it is empty)"));

  const testing::TempDir dir;
  const std::string missing =
      testing::error_text([&] { read_image(dir / "img001.png", ChannelOrder::rgb); });
  EXPECT_TRUE(testing::contains(missing, "img001.png: it does not exist")) << missing;
  write_file_atomically(dir / "img002.png", png);
  EXPECT_TRUE(same(read_image(dir / "img002.png", ChannelOrder::bgr), opencv_decoded(png)));

  const cv::Mat deep(4, 4, CV_16UC3, cv::Scalar(1, 2, 3));
  EXPECT_TRUE(testing::contains(testing::error_text([&] { encode_png(deep, ChannelOrder::bgr); }),
                                "labpose writes 8-bit grey or colour images"));
}

}  // namespace
}  // namespace labpose::pipeline
