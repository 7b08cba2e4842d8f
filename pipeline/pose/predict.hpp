// Keypoints of whole images through a trained network: images at their full size (as DeepLabCut
// evaluates), one PoseRunner (pose_runner.hpp: plan, peaks) per image size. For evaluation and
// image folders; video analysis feeds the same PoseRunner in batches. Not image files' decoding
// beyond load_rgb_image.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "nets/backend.hpp"
#include "nets/net.hpp"
#include "pipeline/pose/decode.hpp"
#include "pipeline/pose/pose_runner.hpp"

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
  std::map<std::pair<int, int>, std::unique_ptr<PoseRunner>> runners_;  // by (height, width)
};

}  // namespace labpose::pipeline
