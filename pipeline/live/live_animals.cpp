// LiveAnimalModel: the network, the assembly and the tracker of a multi-animal model, frame by
// frame.
#include "pipeline/live/live_animals.hpp"

#include <fmt/core.h>
#include <opencv2/core.hpp>

#include "pipeline/analysis/multi_animal_analysis.hpp"
#include "pipeline/training/snapshot.hpp"

namespace labpose::pipeline {

LiveAnimalModel::LiveAnimalModel(const AnimalAnalysisModel& model, const std::string& device,
                                 nets::PlanPrecision precision)
    : model_(model), tracker_(model.tracker) {
  backend_ = make_animal_backend(device, precision);
  net_ = load_snapshot_network(*backend_, *model_.snapshot, model_.model.snapshot);
  predictor_ = std::make_unique<AnimalPredictor>(*backend_, *net_, model_.animals,
                                                 static_cast<int>(model_.model.bodyparts.size()),
                                                 model_.assembly);
  predictor_->use_edges(model_.edges);
}

LiveAnimalModel::~LiveAnimalModel() = default;

void LiveAnimalModel::prepare(int height, int width) {
  const cv::Mat black(height, width, CV_8UC3, cv::Scalar(0, 0, 0));
  predictor_->detect(black);
}

void LiveAnimalModel::estimate(const std::uint8_t* pixels, int height, int width, LivePose& pose) {
  // The predictor only reads the frame.
  const cv::Mat rgb(height, width, CV_8UC3, const_cast<std::uint8_t*>(pixels));
  // The animals of the last frame estimated are the temporal prior of this one's.
  const Assemblies assemblies = predictor_->assemble(predictor_->detect(rgb), previous_);
  previous_ = assemblies.animals;
  pose.animals.clear();
  // As tracking a video does (link_tracklets): a frame without animals leaves the tracker as it is.
  if (!assemblies.animals.empty()) {
    for (const TrackHypothesis& hypothesis : tracker_.track(assemblies.animals, {})) {
      pose.animals.push_back(
          {hypothesis.tracklet_id,
           assemblies.animals[static_cast<std::size_t>(hypothesis.animal)].keypoints});
    }
  }
  pose.keypoints.assign(model_.unique_bodyparts.size(), KeypointPrediction{});
  if (assemblies.single) pose.keypoints = assemblies.single->keypoints;
}

int LiveAnimalModel::animal_bodyparts() const {
  return static_cast<int>(model_.multi_bodyparts.size());
}

std::string LiveAnimalModel::device_text() const {
  return fmt::format("{} in {}", backend_->name(),
                     nets::precision_name(backend_->plan_precision()));
}

}  // namespace labpose::pipeline
