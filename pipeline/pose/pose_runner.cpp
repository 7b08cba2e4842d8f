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
  const std::int64_t per_image =
      nets::largest_tensor_per_image(graph, nets::Shape{1, 3, height, width});
  const std::int64_t largest = limit / per_image;  // the largest batch within the limit
  if (largest >= batch) return batch;
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
  nets::check_shape("PoseRunner", "locref", locref_shape,
                    nets::Shape{batch_, 2 * joints_, map_height_, map_width_});
  peaks_ = backend_.allocate_flat(batch_ * joints_ * nets::Backend::kPeakValues);
  host_peaks_.resize(static_cast<std::size_t>(peaks_.elements()));
}

PoseRunner::~PoseRunner() = default;

void PoseRunner::run(const std::uint8_t* pixels, std::size_t images, KeypointPrediction* out) {
  LABPOSE_ASSERT(images <= static_cast<std::size_t>(batch_));
  if (images == 0) return;
  backend_.copy_pixels_from_host(pixels, input_);
  const auto& outputs = plan_->run_first(input_, static_cast<std::int64_t>(images));
  // The peaks are found where the maps are: on a GPU only N x J x 4 values come back.
  backend_.find_peaks(outputs[0], outputs[1], peaks_);
  backend_.copy_to_host(peaks_, host_peaks_.data());
  const std::size_t keypoints = images * static_cast<std::size_t>(joints_);
  for (std::size_t k = 0; k < keypoints; ++k) {
    const float* peak = host_peaks_.data() + k * nets::Backend::kPeakValues;
    out[k] = keypoint_at(static_cast<std::int64_t>(peak[0]), peak[1], peak[2], peak[3], map_width_,
                         settings_);
  }
}

}  // namespace labpose::pipeline
