// Animals in whole images through a trained multi-animal network: the image at its full size, the
// network run by an inference plan compiled once per image size, its score maps (through the
// sigmoid), location refinement and part-affinity fields copied back whole and assembled into
// animals (pipeline/assembly). For evaluation and the test error during training; not video
// analysis, and not identities over time.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "nets/backend.hpp"
#include "nets/net.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/pose/multi_animal_model.hpp"

namespace cv {
class Mat;
}

namespace labpose::pipeline {

/// The assembly settings of a project's inference_cfg.yaml as create-dataset writes it, for
/// `model` decoded with `decode`.
MapAssemblySettings project_assembly_settings(const MultiAnimalModel& model,
                                              const DecodeSettings& decode);

class AnimalPredictor {
 public:
  /// `net` has `model`'s heads (and `bodyparts` score maps before the identity channels); the
  /// backend and the net must outlive the predictor.
  AnimalPredictor(nets::Backend& backend, const nets::Net& net, const MultiAnimalModel& model,
                  int bodyparts, const MapAssemblySettings& settings);
  ~AnimalPredictor();
  AnimalPredictor(const AnimalPredictor&) = delete;
  AnimalPredictor& operator=(const AnimalPredictor&) = delete;

  /// The animals (and unique bodyparts) of one 8-bit RGB image (rows x cols x 3), in image pixels.
  Assemblies predict(const cv::Mat& rgb);

 private:
  struct SizedPlan;
  SizedPlan& plan_for(int height, int width);

  nets::Backend& backend_;
  const nets::Net& net_;
  MultiAnimalModel model_;
  int bodyparts_ = 0;
  MapAssemblySettings settings_;
  std::map<std::pair<int, int>, std::unique_ptr<SizedPlan>> plans_;  // by (height, width)
};

}  // namespace labpose::pipeline
