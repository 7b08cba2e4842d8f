// FramePredictor: a model opened once, frames run through PoseRunner in whole batches.
#include "pipeline/analysis/predictor.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "devices/devices.hpp"
#include "pipeline/analysis/analysis_backend.hpp"
#include "pipeline/pose/int8_calibration.hpp"
#include "pipeline/training/snapshot.hpp"

namespace labpose::pipeline {

std::unique_ptr<nets::Net> load_model_network(nets::Backend& backend, const AnalysisModel& model) {
  const bool exported = !model.exported_folder.empty();
  const LoadedSnapshot loaded = [&] {
    try {
      return read_snapshot(model.snapshot);
    } catch (const Error& error) {
      if (!exported || error.kind() == ErrorKind::interrupted) throw;
      throw Error(error.what(),
                  "the exported folder is damaged: copy it again from where it was "
                  "made, or export the model again with labpose export");
    }
  }();
  if (loaded.metadata.bodyparts != model.bodyparts ||
      loaded.metadata.architecture != model.net_type) {
    throw Error(fmt::format("{} is a {} for {}, but its pose_cfg.yaml says {} for {}",
                            model.snapshot.string(), loaded.metadata.architecture,
                            fmt::join(loaded.metadata.bodyparts, ", "), model.net_type,
                            fmt::join(model.bodyparts, ", ")),
                exported ? "the exported folder was edited or mixed with another: export the "
                           "model again with labpose export"
                         : "the snapshot does not belong to this shuffle: train it again");
  }
  auto net = load_snapshot_network(backend, loaded, model.snapshot);
  if (backend.plan_precision() != nets::PlanPrecision::int8) return net;
  std::vector<std::filesystem::path> images;
  if (!exported) {
    images = calibration_images(model.snapshot, model.project);
  } else if (std::error_code error;
             !std::filesystem::exists(int8_calibration_file(model.snapshot), error)) {
    throw Error(fmt::format("the exported model {} has no int8 calibration ({} is missing)",
                            model.exported_folder.string(),
                            int8_calibration_file(model.snapshot).filename().string()),
                "export it again with labpose export, which calibrates it on the project's "
                "labeled frames, or use --precision bf16 or fp32");
  }
  calibrate_for_int8(*net, model.snapshot, images);
  return net;
}

FramePredictor::FramePredictor(const projects::ProjectConfig& config,
                               const PredictorOptions& options)
    : FramePredictor(find_analysis_model(config, options.shuffle, options.training_fraction,
                                         options.snapshot_index, options.best_snapshot),
                     options) {}

FramePredictor::FramePredictor(AnalysisModel model, const PredictorOptions& options)
    : model_(std::move(model)),
      backend_(make_analysis_backend(options.device, options.precision, model_)),
      net_(load_model_network(*backend_, model_)),
      batch_size_(options.batch_size > 0 ? options.batch_size : std::max(1, model_.batch_size)) {}

FramePredictor::~FramePredictor() = default;

std::string FramePredictor::device_text() const {
  return fmt::format("{} in {}", backend_->name(),
                     nets::precision_name(backend_->plan_precision()));
}

void FramePredictor::prepare(int height, int width) {
  if (runner_ && runner_height_ == height && runner_width_ == width) return;
  runner_.reset();
  runner_ = std::make_unique<PoseRunner>(
      *backend_, *net_,
      DecodeSettings{model_.stride, model_.locref_stdev, model_.location_refinement}, batch_size_,
      height, width);
  runner_height_ = height;
  runner_width_ = width;
}

void FramePredictor::predict(const std::uint8_t* pixels, std::size_t images, int height, int width,
                             KeypointPrediction* out) {
  if (images == 0) return;
  if (height <= 0 || width <= 0) {
    throw UsageError(fmt::format("frames of {}x{} pixels cannot be analyzed", width, height),
                     "frames are (N, height, width, 3) arrays of 8-bit RGB");
  }
  prepare(height, width);
  const std::size_t frame_bytes =
      static_cast<std::size_t>(height) * static_cast<std::size_t>(width) * 3;
  const auto batch = static_cast<std::size_t>(runner_->batch_size());
  const auto joints = static_cast<std::size_t>(this->joints());
  for (std::size_t first = 0; first < images; first += batch) {
    const std::size_t count = std::min(batch, images - first);
    const std::uint8_t* source = pixels + first * frame_bytes;
    if (count < batch) {
      // The network always runs on whole batches: the frames after `count` are never decoded.
      padded_.resize(batch * frame_bytes);
      std::memcpy(padded_.data(), source, count * frame_bytes);
      source = padded_.data();
    }
    runner_->run(source, count, out + first * joints);
  }
}

std::vector<KeypointPrediction> FramePredictor::predict(const std::uint8_t* pixels, int height,
                                                        int width) {
  std::vector<KeypointPrediction> pose(static_cast<std::size_t>(joints()));
  predict(pixels, 1, height, width, pose.data());
  return pose;
}

}  // namespace labpose::pipeline
