// The image files of a project, PNG and JPEG, read into and written from OpenCV matrices with
// libpng and libjpeg-turbo: the libraries OpenCV's own image codecs use for these two formats,
// without the 67 shared libraries (GDAL, poppler, DICOM, database clients) that OpenCV's codec
// module loads at every start of labpose.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace cv {
class Mat;
}

namespace labpose::pipeline {

/// The order of the three colour channels in a matrix: OpenCV's BGR, or RGB as the network takes
/// it.
enum class ChannelOrder { rgb, bgr };

/// The 8-bit, 3-channel image in `file`, converted as OpenCV's IMREAD_COLOR converts it: grey and
/// palette images to colour, 16-bit samples to their high byte, alpha dropped. An Error names the
/// file and what is wrong with it: missing, not a PNG or JPEG, damaged, or truncated.
cv::Mat read_image(const std::filesystem::path& file, ChannelOrder order);

/// The same from the file's bytes; `name` is what messages call it.
cv::Mat decode_image(std::string_view bytes, const std::string& name, ChannelOrder order);

/// A PNG file of an 8-bit image with 1 or 3 channels, compressed for speed as OpenCV does by
/// default (the sub filter, zlib level 1, run-length strategy).
std::string encode_png(const cv::Mat& image, ChannelOrder order);

/// A baseline JPEG file of an 8-bit image with 1 or 3 channels at `quality` (1–100).
std::string encode_jpeg(const cv::Mat& image, ChannelOrder order, int quality);

}  // namespace labpose::pipeline
