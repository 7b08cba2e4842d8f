// Pose kernels: DeepLabCut's score-map and location-refinement targets, per-map peak finding with
// location refinement (only keypoints go back to the host), and uploaded frames resized and
// normalized into network input. Per-element arithmetic is in pose_math.hpp (tested on the CPU).
#include "cuda/device_types.cuh"
#include "cuda/kernels.hpp"

namespace labpose::cuda::kernels {
namespace {

__global__ void build_targets_kernel(const float* keypoints, const float* radii, TargetMaps maps,
                                     std::int64_t count, std::int64_t joints, std::int64_t rows,
                                     std::int64_t columns, float stride, float locref_stdev) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    write_targets(i, keypoints, radii, maps, joints, rows, columns, stride, locref_stdev);
}

// One block per (image, joint): every thread keeps its best cell, then the block combines them
// with peak_better, which makes the result the row-major first maximum in any order.
__global__ void find_peaks_kernel(const float* score, const float* locref, float* keypoints,
                                  std::int64_t joints, std::int64_t rows, std::int64_t columns,
                                  float stride, float locref_stdev) {
  __shared__ float values[kThreads];
  __shared__ std::int64_t indices[kThreads];
  const std::int64_t n = blockIdx.x / joints, j = blockIdx.x - n * joints;
  const std::int64_t cells = rows * columns;
  const float* map = score + n * cells * joints;
  PeakCandidate best{-INFINITY, cells};
  for (std::int64_t cell = threadIdx.x; cell < cells; cell += blockDim.x) {
    const PeakCandidate candidate{map[cell * joints + j], cell};
    if (peak_better(candidate, best)) best = candidate;
  }
  values[threadIdx.x] = best.value;
  indices[threadIdx.x] = best.index;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      const PeakCandidate mine{values[threadIdx.x], indices[threadIdx.x]};
      const PeakCandidate other{values[threadIdx.x + half], indices[threadIdx.x + half]};
      if (peak_better(other, mine)) {
        values[threadIdx.x] = other.value;
        indices[threadIdx.x] = other.index;
      }
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const std::int64_t index = indices[0] < cells ? indices[0] : 0;
    const Keypoint keypoint =
        keypoint_at(score, locref, n, j, index, joints, rows, columns, stride, locref_stdev);
    float* out = keypoints + blockIdx.x * 3;
    out[0] = keypoint.x;
    out[1] = keypoint.y;
    out[2] = keypoint.likelihood;
  }
}

__global__ void frames_to_images_kernel(const std::uint8_t* frames, float* images,
                                        std::int64_t count, std::int64_t in_h, std::int64_t in_w,
                                        std::int64_t out_h, std::int64_t out_w,
                                        FrameAffine affine) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    images[i] = image_element(i, frames, in_h, in_w, out_h, out_w, affine);
}

}  // namespace

void build_targets(const float* keypoints, const float* radii, float* score, float* locref,
                   float* locref_weights, std::int64_t batch, std::int64_t joints,
                   std::int64_t rows, std::int64_t columns, float stride, float locref_stdev,
                   cudaStream_t stream) {
  const std::int64_t count = batch * rows * columns * joints;
  if (count == 0) return;
  build_targets_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      keypoints, radii, TargetMaps{score, locref, locref_weights}, count, joints, rows, columns,
      stride, locref_stdev);
  check_kernel_launch("build_targets");
}

void find_peaks(const float* score, const float* locref, float* keypoints, std::int64_t batch,
                std::int64_t joints, std::int64_t rows, std::int64_t columns, float stride,
                float locref_stdev, cudaStream_t stream) {
  if (batch * joints == 0 || rows * columns == 0) return;
  find_peaks_kernel<<<static_cast<unsigned>(batch * joints), kThreads, 0, stream>>>(
      score, locref, keypoints, joints, rows, columns, stride, locref_stdev);
  check_kernel_launch("find_peaks");
}

void frames_to_images(const std::uint8_t* frames, float* images, std::int64_t batch,
                      std::int64_t in_h, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w,
                      const FrameAffine& affine, cudaStream_t stream) {
  const std::int64_t count = batch * out_h * out_w * 3;
  if (count == 0) return;
  frames_to_images_kernel<<<blocks_for(count), kThreads, 0, stream>>>(frames, images, count, in_h,
                                                                      in_w, out_h, out_w, affine);
  check_kernel_launch("frames_to_images");
}

}  // namespace labpose::cuda::kernels
