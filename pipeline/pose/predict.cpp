// Whole-image prediction.
#include "pipeline/pose/predict.hpp"

#include <fmt/core.h>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/error.hpp"
#include "nets/fused_graph.hpp"

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
  const int height = rgb.rows, width = rgb.cols;
  Compiled& compiled = plans_[{height, width}];
  const nets::Shape shape{1, 3, height, width};
  if (!compiled.plan) {
    compiled.plan = backend_.compile(net_.fuse(true), shape);
    compiled.input = backend_.allocate(shape);
  }
  backend_.copy_pixels_from_host(rgb.ptr<std::uint8_t>(), compiled.input);
  const auto& outputs = compiled.plan->run(compiled.input);
  const nets::Shape& s = outputs[0].shape();
  score_.resize(static_cast<std::size_t>(outputs[0].elements()));
  locref_.resize(static_cast<std::size_t>(outputs[1].elements()));
  backend_.copy_to_host(outputs[0], score_.data());
  backend_.copy_to_host(outputs[1], locref_.data());
  std::vector<KeypointPrediction> keypoints(static_cast<std::size_t>(s.c()));
  decode_keypoints(score_.data(), locref_.data(), static_cast<int>(s.c()), static_cast<int>(s.h()),
                   static_cast<int>(s.w()), settings_, keypoints.data());
  return keypoints;
}

}  // namespace labpose::pipeline
