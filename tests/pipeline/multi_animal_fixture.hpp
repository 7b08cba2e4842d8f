// DeepLabCut's multi-animal example project (tests/data) with frames to learn from: every labeled
// keypoint drawn as a dot of its bodypart's colour on a grey 640x480 frame. The multi-animal
// dataset and training tests start from it. Not a test itself.
#pragma once

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/images/image_files.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

/// DeepLabCut's example copied into `dir` with a frame for every labeled image; returns its
/// config.yaml.
inline std::filesystem::path multi_animal_example_project(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const fs::path project = dir / "multi_mouse-dlc_team-2022-04-12";
  fs::copy(fs::path(LABPOSE_SOURCE_DIR) / "tests" / "data" / project.filename(), project,
           fs::copy_options::recursive);
  const cv::Mat blank(480, 640, CV_8UC3, cv::Scalar(90, 90, 90));
  for (const auto& [video, images] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"m3v1mp4", {"img1029", "img0122", "img1991", "img1004", "img0893"}},
           {"m3v1mp4short", {"img26", "img11", "img17", "img12", "img05"}}}) {
    for (const std::string& image : images)
      write_file_atomically(project / "labeled-data" / video / (image + ".png"),
                            encode_png(blank, ChannelOrder::bgr));
  }
  // The labels, merged as training merges them, drawn into their frames.
  const auto config = projects::ProjectConfig::load(project / "config.yaml");
  const Dataset dataset = merge_labeled_data(config, nullptr);
  for (const LabeledImage& image : dataset.images) {
    cv::Mat frame = blank.clone();
    for (std::size_t slot = 0; slot < dataset.slots(); ++slot) {
      if (std::isnan(image.x[slot])) continue;
      const auto j = static_cast<double>(slot % dataset.bodyparts.size());
      cv::circle(frame, cv::Point(static_cast<int>(image.x[slot]), static_cast<int>(image.y[slot])),
                 5, cv::Scalar(40 * j, 255 - 40 * j, 128), cv::FILLED);
    }
    write_file_atomically(project / image.path, encode_png(frame, ChannelOrder::bgr));
  }
  return project / "config.yaml";
}

}  // namespace labpose::pipeline
