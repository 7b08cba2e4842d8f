// Live pose of several animals: each frame's candidates assembled into animals as `labpose
// analyze` assembles them (AnimalPredictor, through paf_best), then linked to the animals of the
// frames before by the project's tracker (SortTracker: ellipse or box), one frame at a time. Never
// stitched: stitching joins tracklets by what comes after them, which a live run does not have, so
// an animal's identity is its tracklet id. Not the frame loop (live.hpp) and not analysis.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "nets/net.hpp"
#include "pipeline/analysis/multi_animal_model_choice.hpp"
#include "pipeline/live/live.hpp"
#include "pipeline/pose/animal_predictor.hpp"
#include "pipeline/tracking/sort_tracker.hpp"

namespace labpose::pipeline {

class LiveAnimalModel final : public LivePoseModel {
 public:
  /// Loads `model`'s network onto `device` in `precision` (find_animal_analysis_model() chose it
  /// and its tracker, model.tracker; make_animal_backend's precisions). Throws Error naming the
  /// device or snapshot that cannot be used.
  LiveAnimalModel(const AnimalAnalysisModel& model, const std::string& device,
                  nets::PlanPrecision precision = nets::PlanPrecision::fp32);
  ~LiveAnimalModel() override;
  LiveAnimalModel(const LiveAnimalModel&) = delete;
  LiveAnimalModel& operator=(const LiveAnimalModel&) = delete;

  /// Compiles the plan for frames of this size (by detecting in a black frame of it).
  void prepare(int height, int width) override;
  /// The frame's animals, assembled and tracked: pose.animals by track id, pose.keypoints the
  /// unique bodyparts (empty when the project has none, NaN when not found).
  void estimate(const std::uint8_t* pixels, int height, int width, LivePose& pose) override;
  int animal_bodyparts() const override;
  /// "<backend> in <precision>".
  std::string device_text() const;

 private:
  AnimalAnalysisModel model_;
  std::unique_ptr<nets::Backend> backend_;
  std::unique_ptr<nets::Net> net_;
  std::unique_ptr<AnimalPredictor> predictor_;
  SortTracker tracker_;
  std::vector<Assembly> previous_;  // the animals of the last frame estimated
};

}  // namespace labpose::pipeline
