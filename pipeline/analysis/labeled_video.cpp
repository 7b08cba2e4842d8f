// Labeled videos: keypoints, skeleton and trails drawn with OpenCV onto the decoded frames.
#include "pipeline/analysis/labeled_video.hpp"

#include <fmt/core.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "pipeline/video/reader.hpp"
#include "pipeline/video/writer.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

struct Bodypart {
  TrackColumns columns;
  cv::Scalar bgr;
};

cv::Scalar to_bgr(const Rgb& color) {
  return {std::round(255.0 * color.b), std::round(255.0 * color.g), std::round(255.0 * color.r)};
}

}  // namespace

std::int64_t write_labeled_video(const fs::path& video, const projects::Table& tracks,
                                 const LabeledVideoOptions& options, const fs::path& output) {
  std::vector<Bodypart> parts;
  for (const TrackColumns& columns : track_columns(tracks)) parts.push_back({columns, {}});
  const std::vector<Rgb> colors = colormap_colors(options.colormap, parts.size());
  for (std::size_t j = 0; j < parts.size(); ++j) parts[j].bgr = to_bgr(colors[j]);
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  if (options.skeleton) {
    for (const auto& [from, to] : options.skeleton_edges) {
      const auto find = [&](const std::string& name) {
        for (std::size_t j = 0; j < parts.size(); ++j) {
          if (parts[j].columns.bodypart == name) return j;
        }
        return SIZE_MAX;
      };
      const std::size_t a = find(from), b = find(to);
      if (a != SIZE_MAX && b != SIZE_MAX) edges.emplace_back(a, b);
    }
    if (edges.empty()) {
      console::warn(
          "--skeleton: config.yaml's skeleton names no pair of these bodyparts; no lines drawn");
    }
  }
  const cv::Scalar skeleton_bgr = to_bgr(named_color(options.skeleton_color));

  VideoReader reader(video, {PixelOrder::bgr, std::nullopt, 0});
  VideoWriterOptions writer_options;
  writer_options.width = reader.width();
  writer_options.height = reader.height();
  writer_options.fps = reader.info().fps > 0 ? reader.info().fps : 30.0;
  VideoWriter writer(output, writer_options);
  cv::Mat frame(reader.height(), reader.width(), CV_8UC3);
  const auto rows = static_cast<std::int64_t>(tracks.row_count());
  // A point is drawn when its likelihood is above pcutoff (strictly, as DeepLabCut).
  const auto point = [&](std::int64_t row, const Bodypart& part) -> std::optional<cv::Point> {
    if (row < 0 || row >= rows) return std::nullopt;
    const auto r = static_cast<std::size_t>(row);
    const double x = tracks.at(r, part.columns.x), y = tracks.at(r, part.columns.y),
                 p = tracks.at(r, part.columns.likelihood);
    if (std::isnan(x) || std::isnan(y) || !(p > options.pcutoff)) return std::nullopt;
    return cv::Point(static_cast<int>(x + options.crop_x), static_cast<int>(y + options.crop_y));
  };
  Progress progress(output.filename().string(), reader.frame_count(), "frames");
  std::int64_t written = 0;
  while (const auto read = reader.read(frame.ptr<std::uint8_t>(), frame.step[0])) {
    const std::int64_t row = read->index;
    if (read->status == FrameStatus::undecodable) frame.setTo(cv::Scalar(0, 0, 0));
    for (const auto& [a, b] : edges) {
      const auto from = point(row, parts[a]), to = point(row, parts[b]);
      if (from && to) cv::line(frame, *from, *to, skeleton_bgr, 1, cv::LINE_AA);
    }
    for (const Bodypart& part : parts) {
      for (int back = std::max(options.trail - 1, 0); back >= 1; --back) {
        if (const auto earlier = point(row - back, part)) {
          cv::circle(frame, *earlier, std::max(1, options.dotsize / 2), part.bgr, cv::FILLED,
                     cv::LINE_AA);
        }
      }
      if (const auto now = point(row, part)) {
        cv::circle(frame, *now, std::max(1, options.dotsize), part.bgr, cv::FILLED, cv::LINE_AA);
      }
    }
    writer.write_bgr(frame.ptr<std::uint8_t>(), frame.step[0]);
    ++written;
    progress.advance();
  }
  writer.close();
  return written;
}

}  // namespace labpose::pipeline
