// Keypoints of frames held in memory, for programs that bring their own frames: the Python
// Predictor, closed-loop scripts. The same model choice (model_choice.hpp), network loading, int8
// calibration and PoseRunner as `analyze`, so its keypoints are analyze's for the same frames and
// batch. Not video decoding and not file output: those are analyze's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "nets/net.hpp"
#include "pipeline/analysis/model_choice.hpp"
#include "pipeline/pose/pose_runner.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

struct PredictorOptions {
  int shuffle = 1;
  std::optional<double> training_fraction;  // default: config.yaml's first TrainingFraction
  std::optional<int> snapshot_index;        // default: config.yaml's snapshotindex
  bool best_snapshot = false;               // the best snapshot by held-out error instead
  std::string device = "cpu";
  nets::PlanPrecision precision = nets::PlanPrecision::fp32;
  int batch_size = 0;  // 0: config.yaml's batch_size
};

class FramePredictor {
 public:
  /// Loads the chosen snapshot of `config`'s shuffle onto `options.device` (int8: calibrated as
  /// analyze calibrates). Throws an Error naming what is missing (shuffle, snapshot, device).
  FramePredictor(const projects::ProjectConfig& config, const PredictorOptions& options);
  /// Loads `model` (find_analysis_model(), exported_analysis_model()); of `options`, only device,
  /// precision and batch_size apply (batch 0: the model's batch_size).
  FramePredictor(AnalysisModel model, const PredictorOptions& options);
  ~FramePredictor();
  FramePredictor(const FramePredictor&) = delete;
  FramePredictor& operator=(const FramePredictor&) = delete;

  const AnalysisModel& model() const { return model_; }
  /// J, the bodyparts.
  int joints() const { return static_cast<int>(model_.bodyparts.size()); }
  int batch_size() const { return batch_size_; }
  /// "<backend> in <precision>", e.g. "cpu (oneDNN 2.6.3) in fp32".
  std::string device_text() const;

  /// Builds the inference plan for frames of this size now (predict() builds it on first use).
  void prepare(int height, int width);
  /// Keypoints of `images` frames, in batches of batch_size(); the inference plan is built for the
  /// first frame size and again only when the size changes. pixels: (images, height, width, 3)
  /// packed 8-bit RGB; out: (images, J).
  void predict(const std::uint8_t* pixels, std::size_t images, int height, int width,
               KeypointPrediction* out);
  /// The pose in one frame (height, width, 3 packed 8-bit RGB): J keypoints.
  std::vector<KeypointPrediction> predict(const std::uint8_t* pixels, int height, int width);

 private:
  AnalysisModel model_;
  std::unique_ptr<nets::Backend> backend_;
  std::unique_ptr<nets::Net> net_;
  int batch_size_ = 1;
  std::unique_ptr<PoseRunner> runner_;  // for runner_height_ x runner_width_
  int runner_height_ = 0, runner_width_ = 0;
  std::vector<std::uint8_t> padded_;  // a last, partial batch filled up to batch_size_
};

/// The network of `model` on `backend`, after checking that the snapshot is the shuffle's; with
/// int8 plans, calibrated (calibrate_for_int8) on the shuffle's training images under
/// model.project, or with the calibration an exported model carries.
std::unique_ptr<nets::Net> load_model_network(nets::Backend& backend, const AnalysisModel& model);

}  // namespace labpose::pipeline
