// Animals in whole images through a trained multi-animal network: the image at its full size, the
// network run by an inference plan compiled once per image size, its score maps (through the
// sigmoid), location refinement and part-affinity fields copied back whole and assembled into
// animals (pipeline/assembly), with the identity head's votes when the network has one. For
// evaluation, the test error during training, and the frames of video analysis and live (which
// pass the animals of the frame before, for the temporal prior); not identities over time.
#pragma once

#include <map>
#include <memory>
#include <span>
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

  /// The animals (and unique bodyparts) of one 8-bit RGB image (rows x cols x 3), in image pixels:
  /// detect(), then assemble().
  Assemblies predict(const cv::Mat& rgb);
  /// The candidates and the costs of every edge of the model's graph in one image; with an
  /// identity head, the softmax over its channels at each candidate (read_identity).
  ImageDetections detect(const cv::Mat& rgb);
  /// detect() with each of these nmsradius values in turn, the network run once (evaluate chooses
  /// among them): one result per radius, in their order.
  std::vector<ImageDetections> detect(const cv::Mat& rgb, std::span<const int> nms_radii);
  /// The animals of detect()'s result, linked through the edges use_edges() chose, with their
  /// keypoints' identities (attach_identities).
  Assemblies assemble(const ImageDetections& detections) const;
  /// assemble() for a frame of a video: with the settings' temporal prior, `previous` (the
  /// animals of the frame before; empty: none) weakens the links across its animals
  /// (temporal_prior.hpp).
  Assemblies assemble(const ImageDetections& detections,
                      const std::vector<Assembly>& previous) const;
  /// Assembles through these edges of the model's graph only (DeepLabCut's `paf_best`); every
  /// edge until called. Throws Error for an index outside the graph.
  void use_edges(std::vector<int> edges);

 private:
  struct SizedPlan;
  SizedPlan& plan_for(int height, int width);
  int multi_bodyparts() const {
    return bodyparts_ - static_cast<int>(model_.unique_bodyparts.size());
  }

  nets::Backend& backend_;
  const nets::Net& net_;
  MultiAnimalModel model_;
  int bodyparts_ = 0;
  MapAssemblySettings settings_;
  std::vector<int> edges_;                                           // of model_.graph
  std::map<std::pair<int, int>, std::unique_ptr<SizedPlan>> plans_;  // by (height, width)
};

}  // namespace labpose::pipeline
