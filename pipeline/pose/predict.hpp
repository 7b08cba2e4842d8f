// Keypoints of whole images through a trained network: images at their full size (as DeepLabCut
// evaluates), one compiled inference plan per image size, decoded on the host. For evaluation and
// image folders; video analysis has its own batched, pipelined path.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "nets/backend.hpp"
#include "nets/net.hpp"
#include "pipeline/pose/decode.hpp"

namespace cv {
class Mat;
}

namespace labpose::pipeline {

/// An 8-bit RGB image from a PNG/JPEG file; errors name the file.
cv::Mat load_rgb_image(const std::filesystem::path& file);

class ImagePredictor {
 public:
  ImagePredictor(nets::Backend& backend, const nets::Net& net, const DecodeSettings& settings);
  ~ImagePredictor();
  ImagePredictor(const ImagePredictor&) = delete;
  ImagePredictor& operator=(const ImagePredictor&) = delete;

  /// J keypoints of one 8-bit RGB image (rows x cols x 3).
  std::vector<KeypointPrediction> predict(const cv::Mat& rgb);

 private:
  nets::Backend& backend_;
  const nets::Net& net_;
  DecodeSettings settings_;
  struct Compiled {
    std::unique_ptr<nets::InferencePlan> plan;
    nets::Tensor input;  // (1, 3, H, W)
  };
  std::map<std::pair<int, int>, Compiled> plans_;  // by (height, width)
  std::vector<float> score_, locref_;
};

}  // namespace labpose::pipeline
