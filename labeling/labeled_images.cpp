// Drawing the labels onto their frames.
#include "labeling/labeled_images.hpp"

#include <fmt/core.h>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "pipeline/plots/colormap.hpp"
#include "pipeline/plots/markers.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::labeling {
namespace fs = std::filesystem;

std::vector<LabeledImagesFolder> draw_labeled_images(const projects::ProjectConfig& config) {
  const auto& values = config.values();
  const std::vector<std::string> names = config.keypoint_names();
  const std::vector<pipeline::Rgb> colors =
      pipeline::colormap_colors(values.colormap, names.size());
  const pipeline::Rgb skeleton = pipeline::named_color(values.skeleton_color);
  const cv::Scalar skeleton_rgb(std::round(skeleton.r * 255.0), std::round(skeleton.g * 255.0),
                                std::round(skeleton.b * 255.0));
  std::vector<LabeledImagesFolder> results;
  const projects::ProjectLayout layout(config.project_dir());
  for (const fs::path& folder : layout.labeled_folders()) {
    const auto files = projects::label_files(folder, values.scorer);
    if (!files.any_exists()) continue;
    LabeledImagesFolder result;
    result.folder = layout.checked_labels_folder(folder.filename().string());
    projects::Table table;
    std::vector<projects::KeypointColumns> keypoints;
    try {
      table = projects::read_labels(files).table;
      keypoints = projects::keypoint_columns(table, files.csv);
    } catch (const Error& failure) {
      result.problems.emplace_back(failure.what());
      results.push_back(std::move(result));
      continue;
    }
    fs::create_directories(result.folder);
    for (std::size_t row = 0; row < table.row_count(); ++row) {
      const auto key = projects::image_key(table, row);
      if (key.stem != folder.filename().string()) continue;
      const fs::path image_file = folder / key.image;
      cv::Mat bgr = cv::imread(image_file.string(), cv::IMREAD_COLOR);
      if (bgr.empty()) {
        result.problems.push_back(fmt::format("cannot read {}: missing, or not a PNG/JPEG image",
                                              printable(image_file.string(), 300)));
        continue;
      }
      cv::Mat rgb;
      cv::cvtColor(bgr, rgb, cv::COLOR_BGR2RGB);
      // Where each bodypart of config.yaml is in this row (NaN when not labeled).
      const auto point_of = [&](const std::string& name) {
        const auto it = std::find_if(keypoints.begin(), keypoints.end(), [&](const auto& keypoint) {
          return keypoint.bodypart == name;
        });
        if (it == keypoints.end()) return cv::Point2d(std::nan(""), std::nan(""));
        return cv::Point2d(table.at(row, it->x), table.at(row, it->y));
      };
      for (const auto& edge : values.skeleton) {
        const cv::Point2d from = point_of(edge.from), to = point_of(edge.to);
        if (std::isnan(from.x) || std::isnan(from.y) || std::isnan(to.x) || std::isnan(to.y))
          continue;
        cv::line(rgb, cv::Point(static_cast<int>(from.x), static_cast<int>(from.y)),
                 cv::Point(static_cast<int>(to.x), static_cast<int>(to.y)), skeleton_rgb, 1,
                 cv::LINE_AA);
      }
      std::vector<pipeline::Marker> markers;
      for (std::size_t j = 0; j < names.size(); ++j) {
        const cv::Point2d at = point_of(names[j]);
        markers.push_back({at.x, at.y, pipeline::MarkerShape::plus, colors[j]});
      }
      pipeline::draw_markers(rgb, markers, values.dotsize, values.alphavalue);
      cv::cvtColor(rgb, bgr, cv::COLOR_RGB2BGR);
      std::vector<unsigned char> png;
      cv::imencode(".png", bgr, png);
      const fs::path output = result.folder / fs::path(key.image).replace_extension(".png");
      write_file_atomically(
          output, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
      ++result.images;
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace labpose::labeling
