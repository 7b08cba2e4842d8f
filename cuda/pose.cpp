// Host side of the pose kernels: shape checks, small uploads through pinned staging, launches.
#include "cuda/pose.hpp"

#include <fmt/core.h>

#include <cstring>

#include "core/error.hpp"
#include "cuda/check.hpp"
#include "cuda/kernels.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {
namespace {

using nets::Shape;
using nets::Tensor;
using State = CudaBackend::State;

// `bytes` of host data copied into fresh device scratch, asynchronously through the staging buffer.
std::shared_ptr<nets::Storage> upload_bytes(State& s, const void* host, std::size_t bytes,
                                            const std::string& context) {
  auto device = s.scratch(bytes);
  void* staging = s.staging_for(bytes, context);
  std::memcpy(staging, host, bytes);
  LABPOSE_CUDA_CHECK(
      cudaMemcpyAsync(device->data(), staging, bytes, cudaMemcpyHostToDevice, s.queue()), context);
  s.staging_queued(context);
  return device;
}

void require(bool condition, const std::string& what) {
  if (!condition) {
    throw Error("internal error: " + what,
                "this is a bug in labpose, not in your data; please report it");
  }
}

}  // namespace

void build_targets(CudaBackend& backend, const std::vector<float>& keypoints,
                   const std::vector<float>& radii, const PoseGeometry& geometry, Tensor& score,
                   Tensor& locref, Tensor& locref_weights) {
  const Shape& maps = score.shape();
  const std::string context = fmt::format("build_targets ({})", maps.text());
  require(maps.rank() == 4, context + ": score maps must be (N, J, P, Q)");
  const Shape locref_shape{maps.n(), 2 * maps.c(), maps.h(), maps.w()};
  nets::check_shape("build_targets", "locref", locref.shape(), locref_shape);
  nets::check_shape("build_targets", "locref_weights", locref_weights.shape(), locref_shape);
  require(static_cast<std::int64_t>(keypoints.size()) == maps.n() * maps.c() * 2 &&
              static_cast<std::int64_t>(radii.size()) == maps.n(),
          fmt::format("{}: {} keypoint values and {} radii for {} images of {} joints", context,
                      keypoints.size(), radii.size(), maps.n(), maps.c()));
  State& s = backend.state();
  s.activate();
  if (maps.elements() == 0) return;
  const auto device_keypoints =
      upload_bytes(s, keypoints.data(), keypoints.size() * sizeof(float), context);
  const auto device_radii = upload_bytes(s, radii.data(), radii.size() * sizeof(float), context);
  kernels::build_targets(device_keypoints->data(), device_radii->data(), device_data(score),
                         device_data(locref), device_data(locref_weights), maps.n(), maps.c(),
                         maps.h(), maps.w(), geometry.stride, geometry.locref_stdev, s.queue());
}

std::vector<Keypoint> find_peaks(CudaBackend& backend, const Tensor& score, const Tensor& locref,
                                 const PoseGeometry& geometry) {
  const Shape& maps = score.shape();
  const std::string context = fmt::format("find_peaks ({})", maps.text());
  require(maps.rank() == 4 && maps.h() * maps.w() > 0,
          context + ": score maps must be (N, J, P, Q)");
  if (!locref.empty()) {
    nets::check_shape("find_peaks", "locref", locref.shape(),
                      Shape{maps.n(), 2 * maps.c(), maps.h(), maps.w()});
  }
  State& s = backend.state();
  s.activate();
  const std::int64_t count = maps.n() * maps.c();
  std::vector<Keypoint> keypoints(static_cast<std::size_t>(count));
  if (count == 0) return keypoints;
  const std::size_t bytes = static_cast<std::size_t>(count) * 3 * sizeof(float);
  const auto device = s.scratch(bytes);
  kernels::find_peaks(device_data(score), locref.empty() ? nullptr : device_data(locref),
                      device->data(), maps.n(), maps.c(), maps.h(), maps.w(), geometry.stride,
                      geometry.locref_stdev, s.queue());
  void* staging = s.staging_for(bytes, context);
  LABPOSE_CUDA_CHECK(
      cudaMemcpyAsync(staging, device->data(), bytes, cudaMemcpyDeviceToHost, s.queue()), context);
  s.staging_queued(context);
  LABPOSE_CUDA_CHECK(cudaStreamSynchronize(s.queue()), context);
  std::vector<float> values(static_cast<std::size_t>(count) * 3);
  std::memcpy(values.data(), staging, bytes);
  for (std::size_t k = 0; k < keypoints.size(); ++k)
    keypoints[k] = {values[3 * k], values[3 * k + 1], values[3 * k + 2]};
  return keypoints;
}

void upload_frames(CudaBackend& backend, const std::uint8_t* frames, std::int64_t count,
                   std::int64_t height, std::int64_t width, const FrameAffine& affine,
                   Tensor& images) {
  const Shape& shape = images.shape();
  const std::string context =
      fmt::format("upload_frames ({} frames of {}x{} -> {})", count, width, height, shape.text());
  require(shape.rank() == 4 && shape.n() == count && shape.c() == 3 && height > 0 && width > 0,
          context + ": images must be (N, 3, P, Q) for N frames");
  State& s = backend.state();
  s.activate();
  if (shape.elements() == 0) return;
  const auto device =
      upload_bytes(s, frames, static_cast<std::size_t>(count * height * width * 3), context);
  kernels::frames_to_images(reinterpret_cast<const std::uint8_t*>(device->data()),
                            device_data(images), count, height, width, shape.h(), shape.w(), affine,
                            s.queue());
}

}  // namespace labpose::cuda
