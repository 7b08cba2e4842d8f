// Batched inference and peak decoding with one compiled plan.
#include "pipeline/pose/pose_runner.hpp"

#include "core/error.hpp"
#include "nets/fused_graph.hpp"

namespace labpose::pipeline {

PoseRunner::PoseRunner(nets::Backend& backend, const nets::Net& net, const DecodeSettings& settings,
                       int batch, int height, int width)
    : backend_(backend), settings_(settings), batch_(batch) {
  const nets::Shape input_shape{batch, 3, height, width};
  plan_ = backend_.compile(net.fuse(true), input_shape);
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
