// The int8 check file: JSON naming the snapshot (size, SHA-256), the frames, the bounds and the
// shift, written atomically; anything else in its place is measured again.
#include "pipeline/analysis/int8_check.hpp"

#include <fmt/core.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <optional>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/progress.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/precision_comparison.hpp"
#include "pipeline/analysis/predictor.hpp"
#include "pipeline/dataset/dataset.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/pose/predict.hpp"
#include "pipeline/pose/snapshot_document.hpp"
#include "pipeline/training/pose_config.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "labpose int8 check";

bool plausible(const ShiftPercentiles& p) {
  return std::isfinite(p.median) && std::isfinite(p.p99) && p.median >= 0 && p.p99 >= p.median;
}

// The check in `file` when it was measured for this snapshot at this pcutoff; nullopt (and why)
// otherwise.
std::optional<Int8Check> read_check(const fs::path& file, const SnapshotIdentity& snapshot,
                                    double pcutoff, std::string& why_not) {
  const auto read = read_snapshot_document(file, kFormat, "check", snapshot, why_not);
  if (!read) return std::nullopt;
  const json& document = *read;
  try {
    Int8Check check;
    check.pcutoff = document.at("pcutoff").get<double>();
    if (check.pcutoff != pcutoff) {
      why_not = fmt::format("it was measured with pcutoff {}, config.yaml now says {}",
                            check.pcutoff, pcutoff);
      return std::nullopt;
    }
    check.images = document.at("images").get<std::size_t>();
    check.shift.confident = percentiles_from_json(document.at("confident"));
    check.shift.all = percentiles_from_json(document.at("all"));
    check.shift.likelihood_change = document.at("likelihood_change").get<double>();
    if (!plausible(check.shift.confident) || !plausible(check.shift.all)) {
      why_not = "it is damaged";
      return std::nullopt;
    }
    return check;
  } catch (const json::exception&) {
    why_not = "it is damaged";
    return std::nullopt;
  }
}

void write_check(const fs::path& file, const SnapshotIdentity& snapshot, const Int8Check& check) {
  write_snapshot_document(
      file, kFormat, snapshot,
      {{"method",
        "int8 against fp32 on the CPU, over the shuffle's labeled frames; confident: keypoints "
        "with likelihood >= pcutoff in fp32"},
       {"images", check.images},
       {"pcutoff", check.pcutoff},
       {"bounds", {{"median_px", kInt8MedianShiftBound}, {"p99_px", kInt8P99ShiftBound}}},
       {"passed", check.passed()},
       {"confident", percentiles_json(check.shift.confident)},
       {"all", percentiles_json(check.shift.all)},
       {"likelihood_change", check.shift.likelihood_change}});
}

// The keypoints of every image in fp32 and in int8, the two networks run image by image.
Int8Check measure(const AnalysisModel& model, const std::vector<fs::path>& images) {
  const auto fp32 = devices::make_backend("cpu", nets::PlanPrecision::fp32);
  const auto int8 = devices::make_backend("cpu", nets::PlanPrecision::int8);
  const auto fp32_net = load_model_network(*fp32, model);
  const auto int8_net = load_model_network(*int8, model);  // calibrates, once per snapshot
  const DecodeSettings settings{model.stride, model.locref_stdev, model.location_refinement};
  ImagePredictor fp32_predictor(*fp32, *fp32_net, settings);
  ImagePredictor int8_predictor(*int8, *int8_net, settings);
  const std::size_t count = std::min(images.size(), kInt8CheckImages);
  std::vector<std::vector<KeypointPrediction>> reference, other;
  Progress progress("int8 check", static_cast<std::int64_t>(count), "images");
  for (std::size_t k = 0; k < count; ++k) {
    const cv::Mat rgb = load_rgb_image(images[k * images.size() / count]);  // evenly spread
    reference.push_back(fp32_predictor.predict(rgb));
    other.push_back(int8_predictor.predict(rgb));
    progress.advance();
  }
  Int8Check check;
  check.images = count;
  check.pcutoff = model.pcutoff;
  check.shift = keypoint_shift(reference, other, model.pcutoff);
  return check;
}

}  // namespace

bool Int8Check::passed() const {
  return shift.confident.keypoints > 0 && shift.confident.median <= kInt8MedianShiftBound &&
         shift.confident.p99 <= kInt8P99ShiftBound;
}

std::string Int8Check::text() const {
  if (shift.confident.keypoints == 0) {
    return fmt::format("no keypoint reached pcutoff ({}) in fp32 on {} labeled frame{}", pcutoff,
                       images, images == 1 ? "" : "s");
  }
  return fmt::format(
      "moved {:.2f} px (median) and {:.2f} px (99th percentile) over the {} keypoints with "
      "likelihood >= pcutoff ({}) on {} labeled frame{}",
      shift.confident.median, shift.confident.p99, shift.confident.keypoints, pcutoff, images,
      images == 1 ? "" : "s");
}

fs::path int8_check_file(const fs::path& snapshot) {
  return fs::path(snapshot).concat(".int8-check.json");
}

std::vector<fs::path> int8_check_images(const AnalysisModel& model) {
  if (model.project.empty()) return {};
  const PoseConfig pose = read_pose_config(model.snapshot.parent_path() / "pose_cfg.yaml");
  const Split split = read_split(model.project / pose.split);
  std::vector<fs::path> images;
  for (const auto* list : {&split.train, &split.test})
    for (const std::string& image : *list) images.push_back(model.project / image);
  return images;
}

Int8Check int8_check(const AnalysisModel& model) {
  return int8_check(model, {});
}

Int8Check int8_check(const AnalysisModel& model, const std::vector<fs::path>& given_images) {
  const fs::path file = int8_check_file(model.snapshot);
  const SnapshotIdentity identity = identify_snapshot(model.snapshot);
  std::string why_not;
  if (auto check = read_check(file, identity, model.pcutoff, why_not)) {
    console::info("int8 check: the result in {}", file.string());
    return std::move(*check);
  }
  const std::vector<fs::path> images =
      given_images.empty() ? int8_check_images(model) : given_images;
  if (images.empty()) {
    throw Error(fmt::format("{} cannot be checked in int8: {}", model.snapshot.filename().string(),
                            model.project.empty() ? "an exported model carries no labeled frames"
                                                  : "its shuffle has no labeled frames"),
                "analyze it in the project it was trained in, or choose --precision int8 after "
                "checking it yourself with labpose evaluate --precision int8");
  }
  console::info("int8 check: comparing int8 with fp32 on {} labeled frame{} ({}), once",
                std::min(images.size(), kInt8CheckImages), images.size() == 1 ? "" : "s", why_not);
  const Int8Check check = measure(model, images);
  try {
    write_check(file, identity, check);
    console::info("int8 check: wrote {}", file.string());
  } catch (const Error& error) {
    console::warn("int8 check: could not keep it ({}); it will be measured again next time",
                  error.what());
  }
  return check;
}

}  // namespace labpose::pipeline
