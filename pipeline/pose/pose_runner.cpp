// Batched inference and peak decoding with one compiled plan.
#include "pipeline/pose/pose_runner.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/console.hpp"
#include "core/error.hpp"
#include "nets/fused_graph.hpp"
#include "nets/generic_plan.hpp"

namespace labpose::pipeline {

int batch_within_tensor_limit(const nets::FusedGraph& graph, int batch, int height, int width,
                              std::int64_t limit, const std::string& device) {
  const nets::Shape image{1, 3, height, width};
  const std::int64_t largest = nets::largest_batch(graph, image, limit);
  if (largest >= batch) return batch;
  const std::int64_t per_image = nets::largest_tensor_per_image(graph, image);
  if (largest < 1) {
    throw Error(fmt::format("{}x{} frames are too large for {}: the network's largest tensor "
                            "holds {} values per frame, and {} takes at most {}",
                            width, height, device, per_image, device, limit),
                "analyze on --device cpu, or crop the video (--crop) or scale it down first");
  }
  console::info(
      "batch size {} lowered to {} on {}: at {}x{} the network's largest tensor holds {} "
      "values per frame, and {} takes at most {} in one tensor",
      batch, largest, device, width, height, per_image, device, limit);
  return static_cast<int>(largest);
}

PoseRunner::PoseRunner(nets::Backend& backend, const nets::Net& net, const DecodeSettings& settings,
                       int batch, int height, int width)
    : backend_(backend), settings_(settings) {
  const nets::FusedGraph graph = net.fuse(true);
  batch_ = batch_within_tensor_limit(graph, batch, height, width, backend.largest_tensor_elements(),
                                     backend.name());
  const nets::Shape input_shape{batch_, 3, height, width};
  plan_ = backend_.compile(graph, input_shape);
  input_ = backend_.allocate(input_shape);
  const nets::Shape& score_shape = plan_->output_shapes()[0];
  const nets::Shape& locref_shape = plan_->output_shapes()[1];
  joints_ = static_cast<int>(score_shape.c());
  map_height_ = static_cast<int>(score_shape.h());
  map_width_ = static_cast<int>(score_shape.w());
  score_.resize(static_cast<std::size_t>(score_shape.elements()));
  locref_.resize(static_cast<std::size_t>(locref_shape.elements()));
}

PoseRunner::~PoseRunner() = default;

void PoseRunner::run(const std::uint8_t* pixels, std::size_t images, KeypointPrediction* out) {
  LABPOSE_ASSERT(images <= static_cast<std::size_t>(batch_));
  if (images == 0) return;
  backend_.copy_pixels_from_host(pixels, input_);
  const auto& outputs = plan_->run_first(input_, static_cast<std::int64_t>(images));
  backend_.copy_to_host(outputs[0], score_.data());
  backend_.copy_to_host(outputs[1], locref_.data());
  const std::size_t score_per_image = static_cast<std::size_t>(joints_) *
                                      static_cast<std::size_t>(map_height_) *
                                      static_cast<std::size_t>(map_width_);
  for (std::size_t i = 0; i < images; ++i) {
    decode_keypoints(score_.data() + i * score_per_image, locref_.data() + i * 2 * score_per_image,
                     joints_, map_height_, map_width_, settings_,
                     out + i * static_cast<std::size_t>(joints_));
  }
}

}  // namespace labpose::pipeline
