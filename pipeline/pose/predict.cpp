// Whole-image prediction: one PoseRunner per image size.
#include "pipeline/pose/predict.hpp"

#include <fmt/core.h>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"
#include "pipeline/images/image_files.hpp"

namespace labpose::pipeline {

cv::Mat load_rgb_image(const std::filesystem::path& file) {
  return read_image(file, ChannelOrder::rgb);
}

ImagePredictor::ImagePredictor(nets::Backend& backend, const nets::Net& net,
                               const DecodeSettings& settings)
    : backend_(backend), net_(net), settings_(settings) {}

ImagePredictor::~ImagePredictor() = default;

std::vector<KeypointPrediction> ImagePredictor::predict(const cv::Mat& rgb) {
  LABPOSE_ASSERT(rgb.type() == CV_8UC3 && rgb.isContinuous());
  std::unique_ptr<PoseRunner>& runner = runners_[{rgb.rows, rgb.cols}];
  if (!runner)
    runner = std::make_unique<PoseRunner>(backend_, net_, settings_, 1, rgb.rows, rgb.cols);
  std::vector<KeypointPrediction> keypoints(static_cast<std::size_t>(runner->joints()));
  runner->run(rgb.ptr<std::uint8_t>(), 1, keypoints.data());
  return keypoints;
}

}  // namespace labpose::pipeline
