// Whole-image multi-animal prediction: one plan per image size, maps to the host, assembly.
#include "pipeline/pose/animal_predictor.hpp"

#include <opencv2/core.hpp>

#include <cmath>

#include "core/error.hpp"
#include "nets/fused_graph.hpp"
#include "pipeline/assembly/identity.hpp"
#include "pipeline/assembly/temporal_prior.hpp"

namespace labpose::pipeline {

MapAssemblySettings project_assembly_settings(const MultiAnimalModel& model,
                                              const DecodeSettings& decode) {
  MapAssemblySettings settings;
  settings.candidates.decode = decode;
  settings.assembly.max_individuals = static_cast<int>(model.individuals.size());
  settings.assembly.pcutoff = kProjectDetectionThreshold;
  settings.assembly.min_affinity = kProjectPafThreshold;
  settings.assembly.keep_partial = true;  // animals partly hidden by others (assemble.hpp)
  settings.temporal.enabled = true;       // video frames only (temporal_prior.hpp)
  return settings;
}

struct AnimalPredictor::SizedPlan {
  std::unique_ptr<nets::InferencePlan> plan;
  nets::Tensor input;                     // (1, 3, H, W)
  std::vector<float> score, locref, paf;  // host copies of the three outputs
};

AnimalPredictor::AnimalPredictor(nets::Backend& backend, const nets::Net& net,
                                 const MultiAnimalModel& model, int bodyparts,
                                 const MapAssemblySettings& settings)
    : backend_(backend), net_(net), model_(model), bodyparts_(bodyparts), settings_(settings) {
  for (std::size_t e = 0; e < model_.graph.size(); ++e) edges_.push_back(static_cast<int>(e));
}

AnimalPredictor::~AnimalPredictor() = default;

AnimalPredictor::SizedPlan& AnimalPredictor::plan_for(int height, int width) {
  std::unique_ptr<SizedPlan>& sized = plans_[{height, width}];
  if (sized) return *sized;
  sized = std::make_unique<SizedPlan>();
  const nets::Shape input_shape{1, 3, height, width};
  sized->plan = backend_.compile(net_.fuse(true), input_shape);
  sized->input = backend_.allocate(input_shape);
  const auto& shapes = sized->plan->output_shapes();
  LABPOSE_ASSERT(shapes.size() == (model_.graph.empty() ? 2U : 3U));
  sized->score.resize(static_cast<std::size_t>(shapes[0].elements()));
  sized->locref.resize(static_cast<std::size_t>(shapes[1].elements()));
  if (!model_.graph.empty()) sized->paf.resize(static_cast<std::size_t>(shapes[2].elements()));
  return *sized;
}

void AnimalPredictor::use_edges(std::vector<int> edges) {
  subgraph(model_.graph, edges);  // checks them
  edges_ = std::move(edges);
}

Assemblies AnimalPredictor::predict(const cv::Mat& rgb) {
  return assemble(detect(rgb));
}

Assemblies AnimalPredictor::assemble(const ImageDetections& detections) const {
  return assemble(detections, {});
}

Assemblies AnimalPredictor::assemble(const ImageDetections& detections,
                                     const std::vector<Assembly>& previous) const {
  Assemblies assemblies =
      assemble_after(detections, model_.graph, edges_, multi_bodyparts(), settings_, previous);
  attach_identities(assemblies, detections);
  return assemblies;
}

ImageDetections AnimalPredictor::detect(const cv::Mat& rgb) {
  const int radius = settings_.candidates.nms_radius;
  return std::move(detect(rgb, std::span<const int>(&radius, 1)).front());
}

std::vector<ImageDetections> AnimalPredictor::detect(const cv::Mat& rgb,
                                                     std::span<const int> nms_radii) {
  LABPOSE_ASSERT(rgb.type() == CV_8UC3 && rgb.isContinuous());
  SizedPlan& sized = plan_for(rgb.rows, rgb.cols);
  backend_.copy_pixels_from_host(rgb.ptr<std::uint8_t>(), sized.input);
  const auto& outputs = sized.plan->run_first(sized.input, 1);
  backend_.copy_to_host(outputs[0], sized.score.data());
  backend_.copy_to_host(outputs[1], sized.locref.data());
  if (!model_.graph.empty()) backend_.copy_to_host(outputs[2], sized.paf.data());
  const nets::Shape& grid = sized.plan->output_shapes()[0];
  const int height = static_cast<int>(grid.h()), width = static_cast<int>(grid.w());
  // The bodyparts' maps only (the identity channels follow them), as probabilities.
  const std::size_t values =
      static_cast<std::size_t>(bodyparts_) * static_cast<std::size_t>(height * width);
  for (std::size_t i = 0; i < values; ++i)
    sized.score[i] = 1.0F / (1.0F + std::exp(-sized.score[i]));
  const MapStack scores{std::span<const float>(sized.score).first(values), bodyparts_, height,
                        width};
  const MapStack locref{sized.locref, 2 * bodyparts_, height, width};
  const MapStack pafs{sized.paf, static_cast<int>(2 * model_.graph.size()), height, width};
  std::vector<ImageDetections> found;
  for (const int radius : nms_radii) {
    MapAssemblySettings settings = settings_;
    settings.candidates.nms_radius = radius;
    ImageDetections detections =
        detect_maps(scores, locref, pafs, model_.graph, multi_bodyparts(), settings);
    if (model_.identity_channels > 0) {
      const MapStack identity{std::span<const float>(sized.score).subspan(values),
                              model_.identity_channels, height, width};
      detections.identity = read_identity(identity, detections.candidates);
    }
    found.push_back(std::move(detections));
  }
  return found;
}

}  // namespace labpose::pipeline
