// Fuzz harness for the project's image files (decode_image, what read_image runs on a PNG's or
// JPEG's bytes): any bytes give an 8-bit colour image or an Error, never a crash, a hang, a leak or
// a read outside the buffer (libpng's and libjpeg's errors leave through longjmp). An image that
// was read is written as PNG and reads back with the same pixels, in either channel order.
#include <cstddef>
#include <cstdint>
#include <opencv2/core.hpp>
#include <string_view>

#include "core/error.hpp"
#include "pipeline/images/image_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace pipeline = labpose::pipeline;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  cv::Mat image;
  try {
    image = pipeline::decode_image(bytes, "fuzz.png", pipeline::ChannelOrder::bgr);
  } catch (const labpose::Error&) {
    return 0;  // refused with a message: what a bad file must get
  }
  if (image.empty() || image.type() != CV_8UC3) __builtin_trap();
  const std::string png = pipeline::encode_png(image, pipeline::ChannelOrder::bgr);
  const cv::Mat again = pipeline::decode_image(png, "round-trip.png", pipeline::ChannelOrder::rgb);
  if (again.size() != image.size() || again.type() != CV_8UC3) __builtin_trap();
  for (int row = 0; row < image.rows; ++row) {
    const auto* bgr = image.ptr<cv::Vec3b>(row);
    const auto* rgb = again.ptr<cv::Vec3b>(row);
    for (int col = 0; col < image.cols; ++col) {
      if (bgr[col][0] != rgb[col][2] || bgr[col][1] != rgb[col][1] || bgr[col][2] != rgb[col][0])
        __builtin_trap();
    }
  }
  return 0;
}
