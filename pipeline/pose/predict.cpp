// Whole-image prediction: one PoseRunner per image size.
#include "pipeline/pose/predict.hpp"

#include <fmt/core.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"

namespace labpose::pipeline {

cv::Mat load_rgb_image(const std::filesystem::path& file) {
  cv::Mat bgr = cv::imread(file.string(), cv::IMREAD_COLOR);
  if (bgr.empty()) {
    std::error_code error;
    throw Error(fmt::format("cannot read the image {}: {}", file.string(),
                            std::filesystem::exists(file, error) ? "not a readable PNG or JPEG"
                                                                 : "it does not exist"),
                "restore the image, or make the training set again without it");
  }
  cv::Mat rgb;
  cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
  return rgb;
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
