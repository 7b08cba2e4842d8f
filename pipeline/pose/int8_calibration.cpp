// The calibration file: JSON naming the snapshot (size, SHA-256) and the ops of the fused graph,
// so that a file left from another snapshot or network is measured again, never trusted.
#include "pipeline/pose/int8_calibration.hpp"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <optional>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "nets/calibration.hpp"
#include "nets/fused_graph.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/pose/predict.hpp"
#include "pipeline/pose/snapshot_document.hpp"
#include "pipeline/training/pose_config.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "labpose int8 calibration";

// The ranges in `file` when it is a calibration of this snapshot and graph; nullopt (and why)
// otherwise.
std::optional<nets::ActivationRanges> read_calibration(const fs::path& file,
                                                       const SnapshotIdentity& snapshot,
                                                       const nets::FusedGraph& graph,
                                                       std::string& why_not) {
  const auto read = read_snapshot_document(file, kFormat, "calibration", snapshot, why_not);
  if (!read) return std::nullopt;
  const json& document = *read;
  try {
    const json& values = document.at("values");
    if (!values.is_array() || values.size() != graph.ops.size()) {
      why_not = "it was measured for another network";
      return std::nullopt;
    }
    nets::ActivationRanges ranges;
    ranges.input = document.at("input").get<float>();
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].at("op").get<std::string>() != graph.ops[i].name) {
        why_not = "it was measured for another network";
        return std::nullopt;
      }
      const float range = values[i].at("range").get<float>();
      if (!std::isfinite(range) || range < 0) {
        why_not = "it is damaged";
        return std::nullopt;
      }
      ranges.values.push_back(range);
    }
    if (!std::isfinite(ranges.input) || ranges.input < 0) {
      why_not = "it is damaged";
      return std::nullopt;
    }
    return ranges;
  } catch (const json::exception&) {
    why_not = "it is damaged";
    return std::nullopt;
  }
}

nets::ActivationRanges measure(const nets::FusedGraph& graph, const std::vector<fs::path>& images) {
  const auto backend = devices::make_backend("cpu");
  nets::RangeObserver observer(*backend, graph);
  const std::size_t count = std::min(images.size(), kCalibrationImages);
  Progress progress("calibration", static_cast<std::int64_t>(count), "images");
  for (std::size_t k = 0; k < count; ++k) {
    const fs::path& image = images[k * images.size() / count];  // evenly spread
    const cv::Mat rgb = load_rgb_image(image);
    nets::Tensor input = backend->allocate({1, 3, rgb.rows, rgb.cols});
    backend->copy_pixels_from_host(rgb.ptr<std::uint8_t>(), input);
    observer.observe(input);
    progress.advance();
  }
  return observer.ranges();
}

void write_calibration(const fs::path& file, const SnapshotIdentity& snapshot,
                       const nets::FusedGraph& graph, const nets::ActivationRanges& ranges,
                       std::size_t images) {
  json values = json::array();
  for (std::size_t i = 0; i < graph.ops.size(); ++i)
    values.push_back({{"op", graph.ops[i].name}, {"range", ranges.values[i]}});
  write_snapshot_document(file, kFormat, snapshot,
                          {{"method", "largest magnitude over the calibration images, in fp32"},
                           {"images", images},
                           {"input", ranges.input},
                           {"values", values}});
}

}  // namespace

std::vector<fs::path> calibration_images(const fs::path& snapshot, const fs::path& project) {
  const PoseConfig pose = read_pose_config(projects::pose_cfg_in(snapshot.parent_path()));
  std::vector<fs::path> images;
  for (const std::string& image : read_split(project / pose.split).train)
    images.push_back(project / image);
  return images;
}

fs::path int8_calibration_file(const fs::path& snapshot) {
  return fs::path(snapshot).concat(".int8.json");
}

nets::ActivationRanges calibration_ranges(const nets::Net& net, const fs::path& snapshot,
                                          const std::vector<fs::path>& images) {
  const nets::FusedGraph graph = net.fuse(true);
  const fs::path file = int8_calibration_file(snapshot);
  const SnapshotIdentity identity = identify_snapshot(snapshot);
  std::string why_not;
  if (auto ranges = read_calibration(file, identity, graph, why_not)) {
    console::info("calibration: the ranges in {}", file.string());
    return std::move(*ranges);
  }
  if (images.empty()) {
    throw Error(fmt::format("{} has no calibration on labeled frames, and there are none",
                            snapshot.filename().string()),
                "label frames of the project (labpose label), or use --precision bf16 or fp32");
  }
  const std::size_t count = std::min(images.size(), kCalibrationImages);
  console::info("calibration: measuring {}'s value ranges on {} labeled frame{} ({}), once",
                snapshot.filename().string(), count, count == 1 ? "" : "s", why_not);
  nets::ActivationRanges ranges = measure(graph, images);
  try {
    write_calibration(file, identity, graph, ranges, count);
    console::info("calibration: wrote {}", file.string());
  } catch (const Error& error) {
    console::warn("calibration: could not keep it ({}); it will be measured again next time",
                  error.what());
  }
  return ranges;
}

void calibrate_for_int8(nets::Net& net, const fs::path& snapshot,
                        const std::vector<fs::path>& images) {
  net.set_activation_ranges(calibration_ranges(net, snapshot, images));
}

}  // namespace labpose::pipeline
