// Labeled videos: detections, keypoints, skeletons, trails and individuals' names drawn with OpenCV
// onto the decoded frames.
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
#include "projects/labels.hpp"

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

// The table's keypoints, each in the colormap's colour of its bodypart name or of its individual.
std::vector<Bodypart> coloured_parts(const projects::Table& tracks,
                                     const LabeledVideoOptions& options) {
  const std::vector<TrackColumns> columns = track_columns(tracks);
  const bool by_individual = options.color_by == ColorBy::individual;
  const std::vector<std::string> names =
      by_individual ? track_individuals(columns) : track_bodyparts(columns);
  const std::vector<Rgb> colors = colormap_colors(options.colormap, names.size());
  std::vector<Bodypart> parts;
  for (const TrackColumns& column : columns) {
    const std::string& name = by_individual ? column.individual : column.bodypart;
    const auto at = std::find(names.begin(), names.end(), name) - names.begin();
    parts.push_back({column, to_bgr(colors[static_cast<std::size_t>(at)])});
  }
  return parts;
}

// The skeleton's pairs of parts, within each individual (DeepLabCut's get_segment_indices).
std::vector<std::pair<std::size_t, std::size_t>> skeleton_pairs(
    const std::vector<Bodypart>& parts, const LabeledVideoOptions& options) {
  std::vector<std::pair<std::size_t, std::size_t>> edges;
  if (!options.skeleton) return edges;
  std::vector<std::string> individuals;
  for (const Bodypart& part : parts) individuals.push_back(part.columns.individual);
  individuals.erase(std::unique(individuals.begin(), individuals.end()), individuals.end());
  for (const std::string& individual : individuals) {
    const auto find = [&](const std::string& name) {
      for (std::size_t j = 0; j < parts.size(); ++j) {
        if (parts[j].columns.individual == individual && parts[j].columns.bodypart == name)
          return j;
      }
      return SIZE_MAX;
    };
    for (const auto& [from, to] : options.skeleton_edges) {
      const std::size_t a = find(from), b = find(to);
      if (a != SIZE_MAX && b != SIZE_MAX) edges.emplace_back(a, b);
    }
  }
  if (edges.empty()) {
    console::warn(
        "--skeleton: config.yaml's skeleton names no pair of these bodyparts; no lines drawn");
  }
  return edges;
}

// Frame `row`'s detections at least `pcutoff` likely, beneath what comes after: small, light grey
// with a dark rim, so that they show on dark and light fur and never pass for a bodypart's colour.
void draw_detections(cv::Mat& frame, std::int64_t row, const LabeledVideoOptions& options) {
  if (row < 0 || row >= static_cast<std::int64_t>(options.detections.size())) return;
  const int radius = std::max(2, options.dotsize / 3);
  for (const auto& bodypart : options.detections[static_cast<std::size_t>(row)]) {
    for (const Candidate& candidate : bodypart) {
      // At or above pcutoff, as DeepLabCut's create_video_with_all_detections.
      if (!(candidate.confidence >= options.pcutoff) || std::isnan(candidate.x)) continue;
      const cv::Point at(static_cast<int>(candidate.x) + options.crop_x,
                         static_cast<int>(candidate.y) + options.crop_y);
      cv::circle(frame, at, radius + 1, cv::Scalar(64, 64, 64), cv::FILLED, cv::LINE_AA);
      cv::circle(frame, at, radius, cv::Scalar(200, 200, 200), cv::FILLED, cv::LINE_AA);
    }
  }
}

// `name` in `bgr` with a dark outline, its lower-left corner at `at`.
void draw_name(cv::Mat& frame, const std::string& name, cv::Point at, const cv::Scalar& bgr) {
  cv::putText(frame, name, at, cv::FONT_HERSHEY_SIMPLEX, 0.5, cv::Scalar(0, 0, 0), 3, cv::LINE_AA);
  cv::putText(frame, name, at, cv::FONT_HERSHEY_SIMPLEX, 0.5, bgr, 1, cv::LINE_AA);
}

}  // namespace

ColorBy parse_color_by(const std::string& text) {
  if (text == "bodypart") return ColorBy::bodypart;
  if (text == "individual") return ColorBy::individual;
  throw UsageError(fmt::format("--color-by {} is not a colouring", text),
                   "use --color-by individual (one colour per animal) or bodypart");
}

std::optional<NameTag> name_tag(const projects::Table& tracks, std::size_t row,
                                const std::vector<TrackColumns>& columns,
                                const std::string& individual, double pcutoff) {
  std::optional<NameTag> tag;
  for (const TrackColumns& part : columns) {
    if (part.individual != individual) continue;
    const double x = tracks.at(row, part.x), y = tracks.at(row, part.y);
    if (std::isnan(x) || std::isnan(y) || !(tracks.at(row, part.likelihood) > pcutoff)) continue;
    if (!tag || y < tag->y) tag = NameTag{x, y};
  }
  return tag;
}

std::int64_t write_labeled_video(const fs::path& video, const projects::Table& tracks,
                                 const LabeledVideoOptions& options, const fs::path& output) {
  const std::vector<Bodypart> parts = coloured_parts(tracks, options);
  const std::vector<std::pair<std::size_t, std::size_t>> edges = skeleton_pairs(parts, options);
  const cv::Scalar skeleton_bgr = to_bgr(named_color(options.skeleton_color));
  std::vector<TrackColumns> columns;
  for (const Bodypart& part : parts) columns.push_back(part.columns);
  // The animals whose names are drawn, each with the colour of its first keypoint.
  std::vector<std::pair<std::string, cv::Scalar>> named;
  for (const std::string& individual : track_individuals(columns)) {
    if (!options.names || individual.empty() || individual == projects::kUniqueIndividual) continue;
    for (const Bodypart& part : parts) {
      if (part.columns.individual == individual) {
        named.emplace_back(individual, part.bgr);
        break;
      }
    }
  }

  VideoReader reader(video, {PixelOrder::bgr, std::nullopt, 0});
  VideoWriterOptions writer_options;
  writer_options.width = reader.width();
  writer_options.height = reader.height();
  writer_options.fps = reader.info().fps > 0 ? reader.info().fps : 30.0;
  VideoWriter writer(output, writer_options);
  cv::Mat frame(reader.height(), reader.width(), CV_8UC3);
  const auto rows = static_cast<std::int64_t>(tracks.row_count());
  const cv::Point offset(options.crop_x, options.crop_y);
  // A point is drawn when its likelihood is above pcutoff (strictly, as DeepLabCut).
  const auto point = [&](std::int64_t row, const Bodypart& part) -> std::optional<cv::Point> {
    if (row < 0 || row >= rows) return std::nullopt;
    const auto r = static_cast<std::size_t>(row);
    const double x = tracks.at(r, part.columns.x), y = tracks.at(r, part.columns.y),
                 p = tracks.at(r, part.columns.likelihood);
    if (std::isnan(x) || std::isnan(y) || !(p > options.pcutoff)) return std::nullopt;
    return cv::Point(static_cast<int>(x), static_cast<int>(y)) + offset;
  };
  Progress progress(output.filename().string(), reader.frame_count(), "frames");
  std::int64_t written = 0;
  while (const auto read = reader.read(frame.ptr<std::uint8_t>(), frame.step[0])) {
    const std::int64_t row = read->index;
    if (read->status == FrameStatus::undecodable) frame.setTo(cv::Scalar(0, 0, 0));
    draw_detections(frame, row, options);
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
    for (const auto& [individual, bgr] : named) {
      if (row >= rows) break;
      const auto tag =
          name_tag(tracks, static_cast<std::size_t>(row), columns, individual, options.pcutoff);
      if (!tag) continue;
      const int gap = std::max(1, options.dotsize) + 3;
      draw_name(frame, individual,
                cv::Point(static_cast<int>(tag->x) + gap, static_cast<int>(tag->y) - gap) + offset,
                bgr);
    }
    writer.write_bgr(frame.ptr<std::uint8_t>(), frame.step[0]);
    ++written;
    progress.advance();
  }
  writer.close();
  return written;
}

}  // namespace labpose::pipeline
