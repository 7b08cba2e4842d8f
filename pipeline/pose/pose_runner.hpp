// Images to keypoints through a trained network, the one path for every caller: packed 8-bit RGB
// pixels copied to the backend, the network run by an inference plan compiled once for one batch
// shape, the peaks of its score maps found on the backend (Backend::find_peaks) and only they
// copied back and turned into keypoints (decode.hpp). Not threads,
// not video and not image files: video analysis (stages) and ImagePredictor feed it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "nets/fused_graph.hpp"
#include "nets/net.hpp"
#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

/// `batch`, or the largest batch of height x width frames for which no tensor of a plan of `graph`
/// holds more than `limit` values (Backend::largest_tensor_elements of `device`), said on the
/// console when lower; throws an Error when not even one frame fits.
int batch_within_tensor_limit(const nets::FusedGraph& graph, int batch, int height, int width,
                              std::int64_t limit, const std::string& device);

class PoseRunner {
 public:
  /// Compiles `net` on `backend` for batches of `batch` images of height x width pixels (fewer
  /// where the backend's tensors cannot hold that many: batch_size() says); both must outlive the
  /// runner.
  PoseRunner(nets::Backend& backend, const nets::Net& net, const DecodeSettings& settings,
             int batch, int height, int width);
  ~PoseRunner();
  PoseRunner(const PoseRunner&) = delete;
  PoseRunner& operator=(const PoseRunner&) = delete;

  /// N, the images the network runs on at once.
  int batch_size() const { return batch_; }
  /// J, the keypoints per image.
  int joints() const { return joints_; }

  /// Keypoints of the first `images` (<= N) of a whole batch. pixels: (N, H, W, 3) packed RGB
  /// (the network always runs on N; images after `images` are not decoded); out: (images, J).
  void run(const std::uint8_t* pixels, std::size_t images, KeypointPrediction* out);

 private:
  nets::Backend& backend_;
  DecodeSettings settings_;
  int batch_ = 0, joints_ = 0, map_height_ = 0, map_width_ = 0;
  std::unique_ptr<nets::InferencePlan> plan_;
  nets::Tensor input_;             // (N, 3, H, W)
  nets::Tensor peaks_;             // (N, J, kPeakValues) on the backend
  std::vector<float> host_peaks_;  // the same on the host
};

}  // namespace labpose::pipeline
