// Drawing the labels onto their frames.
#include "labeling/labeled_images.hpp"

#include <fmt/core.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/printable.hpp"
#include "pipeline/images/image_files.hpp"
#include "pipeline/plots/colormap.hpp"
#include "pipeline/plots/markers.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::labeling {
namespace fs = std::filesystem;

namespace {

// One animal's columns of a label table (the only one of a single-animal table; "single" holds a
// multi-animal project's unique bodyparts), with config.yaml's keypoint index of each.
struct Group {
  std::string individual;
  std::vector<std::pair<std::size_t, const projects::KeypointColumns*>> keypoints;
};

std::vector<Group> group_keypoints(const std::vector<projects::KeypointColumns>& keypoints,
                                   const std::vector<std::string>& names) {
  std::vector<Group> groups;
  for (const auto& keypoint : keypoints) {
    const auto name = std::find(names.begin(), names.end(), keypoint.bodypart);
    if (name == names.end()) continue;  // not in config.yaml: check-labels reports it
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const Group& g) { return g.individual == keypoint.individual; });
    if (group == groups.end()) group = groups.insert(groups.end(), Group{keypoint.individual, {}});
    group->keypoints.emplace_back(static_cast<std::size_t>(name - names.begin()), &keypoint);
  }
  return groups;
}

// Draws each animal's skeleton onto `rgb` and returns the markers of its points: coloured by
// bodypart in a single-animal project, by individual in a multi-animal one.
std::vector<pipeline::Marker> draw_row(cv::Mat& rgb, const projects::Table& table, std::size_t row,
                                       const std::vector<Group>& groups,
                                       const projects::ConfigValues& values,
                                       const std::vector<pipeline::Rgb>& colors,
                                       const cv::Scalar& skeleton_rgb) {
  std::vector<pipeline::Marker> markers;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    // Where each bodypart of this animal is in this row (NaN when not labeled).
    const auto point_of = [&](const std::string& name) {
      for (const auto& [index, keypoint] : groups[g].keypoints) {
        if (keypoint->bodypart == name)
          return cv::Point2d(table.at(row, keypoint->x), table.at(row, keypoint->y));
      }
      return cv::Point2d(std::nan(""), std::nan(""));
    };
    for (const auto& edge : values.skeleton) {
      const cv::Point2d from = point_of(edge.from), to = point_of(edge.to);
      if (std::isnan(from.x) || std::isnan(from.y) || std::isnan(to.x) || std::isnan(to.y))
        continue;
      cv::line(rgb, cv::Point(static_cast<int>(from.x), static_cast<int>(from.y)),
               cv::Point(static_cast<int>(to.x), static_cast<int>(to.y)), skeleton_rgb, 1,
               cv::LINE_AA);
    }
    for (const auto& [index, keypoint] : groups[g].keypoints) {
      markers.push_back({table.at(row, keypoint->x), table.at(row, keypoint->y),
                         pipeline::MarkerShape::plus, colors[values.multi_animal ? g : index]});
    }
  }
  return markers;
}

}  // namespace

std::vector<LabeledImagesFolder> draw_labeled_images(const projects::ProjectConfig& config) {
  const auto& values = config.values();
  const std::vector<std::string> names = config.keypoint_names();
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
    const std::vector<Group> groups = group_keypoints(keypoints, names);
    const std::vector<pipeline::Rgb> colors = pipeline::colormap_colors(
        values.colormap, values.multi_animal ? groups.size() : names.size());
    fs::create_directories(result.folder);
    for (std::size_t row = 0; row < table.row_count(); ++row) {
      const auto key = projects::image_key(table, row);
      if (key.stem != folder.filename().string()) continue;
      const fs::path image_file = folder / key.image;
      cv::Mat rgb;
      try {
        rgb = pipeline::read_image(image_file, pipeline::ChannelOrder::rgb);
      } catch (const Error& unreadable) {
        result.problems.push_back(printable(unreadable.what(), 400));
        continue;
      }
      const std::vector<pipeline::Marker> markers =
          draw_row(rgb, table, row, groups, values, colors, skeleton_rgb);
      pipeline::draw_markers(rgb, markers, values.dotsize, values.alphavalue);
      // DeepLabCut's names: <image>.png, or <image>_individual.png coloured by individual.
      const fs::path output = result.folder / (fs::path(key.image).stem().string() +
                                               (values.multi_animal ? "_individual.png" : ".png"));
      write_file_atomically(output, pipeline::encode_png(rgb, pipeline::ChannelOrder::rgb));
      ++result.images;
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace labpose::labeling
