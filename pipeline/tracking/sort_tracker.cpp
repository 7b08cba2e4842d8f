// The SORT loop shared by the ellipse and the box tracker; the two differ in what they measure,
// how they compare it and their Kalman filter's noise, all set up here as in trackingutils.py.
#include "pipeline/tracking/sort_tracker.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "pipeline/assembly/assignment.hpp"
#include "pipeline/tracking/box.hpp"
#include "pipeline/tracking/ellipse.hpp"

namespace labpose::pipeline {
namespace {

void scale_diagonal(std::vector<double>& matrix, std::size_t size, std::size_t from,
                    double factor) {
  for (std::size_t i = from; i < size; ++i) matrix[i * size + i] *= factor;
}

// trackingutils' filters: the first `moving` of the m measured values move at a constant velocity
// (the state is the measurement, then those velocities), with its noise and uncertainty.
// EllipseTracker moves all 5 ellipse values; BoxTracker centre and area, not the aspect ratio,
// whose velocity noise is also smaller.
KalmanFilter sort_filter(const std::vector<double>& measurement, std::size_t moving) {
  const std::size_t m = measurement.size(), n = m + moving;
  KalmanFilter filter(n, m);
  for (std::size_t i = 0; i < moving; ++i) filter.transition()[i * n + m + i] = 1.0;
  scale_diagonal(filter.measurement_noise(), m, 2, 10.0);
  scale_diagonal(filter.state_covariance(), n, m, 1000.0);  // velocities are not observed
  scale_diagonal(filter.state_covariance(), n, 0, 10.0);
  scale_diagonal(filter.process_noise(), n, m, 0.01);
  if (moving < m) scale_diagonal(filter.process_noise(), n, n - 1, 0.01);
  std::copy(measurement.begin(), measurement.end(), filter.state().begin());
  return filter;
}

Ellipse as_ellipse(const std::vector<double>& values) {
  return {values[0], values[1], values[2], values[3], values[4]};
}

Box predicted_box(const KalmanFilter& filter) {
  const auto& x = filter.state();
  return measurement_to_box(x[0], x[1], x[2], x[3]);
}

bool finite_prediction(const KalmanFilter& filter) {
  const auto& x = filter.state();
  return std::all_of(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(filter.measurement_size()),
                     [](double value) { return std::isfinite(value); });
}

}  // namespace

void check_tracker_settings(const TrackerSettings& settings) {
  const std::string hint =
      "set the tracking keys of inference_cfg.yaml (max_age, min_hits, "
      "iou_threshold, boundingboxslack) to DeepLabCut's ranges";
  if (settings.max_age < 0)
    throw Error("tracking: max_age must be 0 or more frames (found " +
                    std::to_string(settings.max_age) + ")",
                hint);
  if (settings.min_hits < 0)
    throw Error(
        "tracking: min_hits must be 0 or more (found " + std::to_string(settings.min_hits) + ")",
        hint);
  if (!(settings.iou_threshold >= 0.0 && settings.iou_threshold <= 1.0))
    throw Error("tracking: iou_threshold must lie in [0, 1] (found " +
                    std::to_string(settings.iou_threshold) + ")",
                hint);
  if (!(settings.bounding_box_slack >= 0.0))
    throw Error("tracking: boundingboxslack must be 0 or more pixels (found " +
                    std::to_string(settings.bounding_box_slack) + ")",
                hint);
  if (!(settings.ellipse_sd > 0.0))
    throw Error("tracking: the ellipse size must be a positive number of standard deviations",
                hint);
  if (!(settings.identity_weight >= 0.0 && settings.identity_weight <= 1.0))
    throw Error("tracking: the weight of identity votes must lie in [0, 1] (found " +
                    std::to_string(settings.identity_weight) + ")",
                hint);
}

SortTracker::SortTracker(const TrackerSettings& settings) : settings_(settings) {
  check_tracker_settings(settings);
  LABPOSE_ASSERT(settings.method != TrackMethod::identity);
}

std::vector<SortTracker::Detection> SortTracker::measure(
    const std::vector<Assembly>& animals) const {
  std::vector<Detection> detections;
  for (std::size_t i = 0; i < animals.size(); ++i) {
    Detection detection;
    detection.animal = static_cast<int>(i);
    if (settings_.method == TrackMethod::ellipse) {
      const auto ellipse = fit_ellipse(animals[i].keypoints, settings_.ellipse_sd);
      if (!ellipse) continue;
      detection.measurement = {ellipse->x, ellipse->y, ellipse->width, ellipse->height,
                               ellipse->theta};
    } else {
      const auto box = keypoint_box(animals[i].keypoints, settings_.bounding_box_slack);
      if (!box) continue;
      const auto z = box_to_measurement(*box);
      detection.measurement.assign(z.begin(), z.end());
    }
    detections.push_back(std::move(detection));
  }
  return detections;
}

SortTracker::Target SortTracker::new_target(const Detection& detection, int identity) {
  const std::size_t moving = settings_.method == TrackMethod::ellipse ? 5 : 3;
  Target target{sort_filter(detection.measurement, moving)};
  target.id = next_id_++;
  target.identity = identity;
  return target;
}

double SortTracker::similarity(const Detection& detection, const Target& target) const {
  if (settings_.method == TrackMethod::ellipse)
    return ellipse_similarity(as_ellipse(detection.measurement), as_ellipse(target.filter.state()));
  const auto& z = detection.measurement;
  return box_iou(measurement_to_box(z[0], z[1], z[2], z[3]), predicted_box(target.filter));
}

void SortTracker::predict_targets() {
  for (auto& target : targets_) {
    auto& x = target.filter.state();
    // SORT keeps the predicted area from turning negative.
    if (settings_.method == TrackMethod::box && x[6] + x[2] <= 0.0) x[6] = 0.0;
    target.filter.predict();
    if (target.time_since_update > 0) target.hit_streak = 0;
    ++target.time_since_update;
  }
  std::erase_if(targets_, [](const Target& target) { return !finite_prediction(target.filter); });
}

std::vector<TrackHypothesis> SortTracker::track(const std::vector<Assembly>& animals,
                                                const std::vector<int>& identities) {
  ++frames_;
  predict_targets();
  const auto detections = measure(animals);
  const bool with_identity = settings_.method == TrackMethod::ellipse && !identities.empty();
  const auto rows = detections.size(), cols = targets_.size();
  std::vector<double> weights(rows * cols, 0.0);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      double weight = similarity(detections[i], targets_[j]);
      const auto animal = static_cast<std::size_t>(detections[i].animal);
      if (with_identity && identities[animal] == targets_[j].identity)
        weight *= 1.0 + settings_.identity_weight;
      weights[i * cols + j] = weight;
    }
  }
  std::vector<int> animal_of_target(cols, -1);
  std::vector<bool> detection_matched(rows, false);
  if (rows > 0 && cols > 0) {
    for (const auto& [row, col] :
         max_weight_assignment(weights, static_cast<int>(rows), static_cast<int>(cols))) {
      const auto i = static_cast<std::size_t>(row), j = static_cast<std::size_t>(col);
      if (weights[i * cols + j] < settings_.iou_threshold) continue;
      detection_matched[i] = true;
      animal_of_target[j] = detections[i].animal;
      targets_[j].filter.update(detections[i].measurement);
      targets_[j].time_since_update = 0;
      ++targets_[j].hit_streak;
    }
  }
  for (std::size_t i = 0; i < rows; ++i) {
    if (detection_matched[i]) continue;
    const auto animal = static_cast<std::size_t>(detections[i].animal);
    targets_.push_back(new_target(detections[i], with_identity ? identities[animal] : -1));
    animal_of_target.push_back(detections[i].animal);
  }
  std::vector<TrackHypothesis> hypotheses;
  for (std::size_t j = 0; j < targets_.size(); ++j) {
    const auto& target = targets_[j];
    if (target.time_since_update < 1 &&
        (target.hit_streak >= settings_.min_hits || frames_ <= settings_.min_hits))
      hypotheses.push_back({target.id, animal_of_target[j]});
  }
  std::erase_if(targets_, [this](const Target& target) {
    return target.time_since_update > settings_.max_age;
  });
  return hypotheses;
}

}  // namespace labpose::pipeline
