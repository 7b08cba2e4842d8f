// The pose-specific per-element arithmetic of the CUDA kernels, as __host__ __device__ functions
// tested on the CPU: DeepLabCut's score-map / location-refinement targets (DESIGN.md "Targets,
// loss, decoding", dlc-format.md 4.5), peak finding and decoding (4.7), and bilinear sampling of
// uploaded frames as OpenCV's INTER_LINEAR does it. No launches or memory here (pose.cu, pose.hpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

namespace labpose::cuda {

// ---- targets ---------------------------------------------------------------------------------
/// The targets of one score-map cell for one keypoint.
struct CellTarget {
  float score = 0.0F;          // 1 inside the disk, else 0
  float dx = 0.0F, dy = 0.0F;  // (keypoint - cell centre) / locref_stdev inside the disk, else 0
  float locref_weight = 0.0F;  // 1 inside the disk (both locref channels), else 0
};

/// Cell (row, col) of a map with `stride` pixels per cell has its centre at
/// (col * stride + stride / 2, row * stride + stride / 2). It is positive when its squared distance
/// to the keypoint is <= radius^2 (radius = pos_dist_thresh x augmentation scale). A keypoint with
/// a non-finite coordinate is missing: negative everywhere, no location refinement.
__host__ __device__ inline CellTarget cell_target(float keypoint_x, float keypoint_y,
                                                  std::int64_t row, std::int64_t col, float stride,
                                                  float radius, float locref_stdev) {
  CellTarget target;
  const double x = keypoint_x, y = keypoint_y;
  if (!(x - x == 0.0) || !(y - y == 0.0)) return target;  // NaN or infinite
  const double half = 0.5 * stride;
  const double dx = x - (static_cast<double>(col) * stride + half);
  const double dy = y - (static_cast<double>(row) * stride + half);
  if (dx * dx + dy * dy <= static_cast<double>(radius) * radius) {
    target.score = 1.0F;
    target.dx = static_cast<float>(dx / locref_stdev);
    target.dy = static_cast<float>(dy / locref_stdev);
    target.locref_weight = 1.0F;
  }
  return target;
}

/// Where the kernel writes targets: score (N, P, Q, J), locref and its weights (N, P, Q, 2J), i.e.
/// the NHWC storage of the logical (N, J, P, Q) and (N, 2J, P, Q) tensors.
struct TargetMaps {
  float* score;
  float* locref;
  float* locref_weights;
};

/// The targets of score element `i` (NHWC) for keypoints (N, J, 2) and radii (N): the body of the
/// target-building kernel.
__host__ __device__ inline void write_targets(std::int64_t i, const float* keypoints,
                                              const float* radii, const TargetMaps& maps,
                                              std::int64_t joints, std::int64_t rows,
                                              std::int64_t columns, float stride,
                                              float locref_stdev) {
  const std::int64_t cell = i / joints, j = i - cell * joints;  // cell = (n * P + row) * Q + col
  const std::int64_t image_row = cell / columns, col = cell - image_row * columns;
  const std::int64_t n = image_row / rows, row = image_row - n * rows;
  const float* keypoint = keypoints + (n * joints + j) * 2;
  const CellTarget target =
      cell_target(keypoint[0], keypoint[1], row, col, stride, radii[n], locref_stdev);
  maps.score[i] = target.score;
  const std::int64_t offset = cell * 2 * joints + 2 * j;
  maps.locref[offset] = target.dx;
  maps.locref[offset + 1] = target.dy;
  maps.locref_weights[offset] = target.locref_weight;
  maps.locref_weights[offset + 1] = target.locref_weight;
}

// ---- peaks -----------------------------------------------------------------------------------
/// A score-map cell competing for the maximum: its logit and its row-major index.
struct PeakCandidate {
  float value;
  std::int64_t index;
};

/// True when `a` beats `b`: a larger score, or an equal score at a smaller index (so any order of
/// comparisons finds the row-major first maximum, as numpy's argmax). NaN scores count as -inf.
__host__ __device__ inline bool peak_better(const PeakCandidate& a, const PeakCandidate& b) {
  const float key_a = a.value == a.value ? a.value : -INFINITY;
  const float key_b = b.value == b.value ? b.value : -INFINITY;
  return key_a > key_b || (key_a == key_b && a.index < b.index);
}

/// A decoded keypoint in image pixels.
struct Keypoint {
  float x = 0.0F, y = 0.0F, likelihood = 0.0F;
};

/// DeepLabCut's decoding of the best cell `index` (row-major in a map `columns` wide):
/// x = col * stride + stride / 2 + dx * locref_stdev (likewise y), likelihood = sigmoid(logit).
/// dx, dy are the raw location-refinement outputs at that cell (0 without refinement).
__host__ __device__ inline Keypoint decode_peak(std::int64_t index, std::int64_t columns,
                                                float logit, float dx, float dy, float stride,
                                                float locref_stdev) {
  const std::int64_t row = index / columns, col = index - row * columns;
  Keypoint keypoint;
  keypoint.x = static_cast<float>(col) * stride + 0.5F * stride + dx * locref_stdev;
  keypoint.y = static_cast<float>(row) * stride + 0.5F * stride + dy * locref_stdev;
  keypoint.likelihood = 1.0F / (1.0F + expf(-logit));
  return keypoint;
}

/// The keypoint of joint j of image n whose best cell is `index`: score (N, P, Q, J) logits and
/// locref (N, P, Q, 2J) or null, as the peak kernel stores them.
__host__ __device__ inline Keypoint keypoint_at(const float* score, const float* locref,
                                                std::int64_t n, std::int64_t j, std::int64_t index,
                                                std::int64_t joints, std::int64_t rows,
                                                std::int64_t columns, float stride,
                                                float locref_stdev) {
  const std::int64_t cell = n * rows * columns + index;
  float dx = 0.0F, dy = 0.0F;
  if (locref != nullptr) {
    dx = locref[cell * 2 * joints + 2 * j];
    dy = locref[cell * 2 * joints + 2 * j + 1];
  }
  return decode_peak(index, columns, score[cell * joints + j], dx, dy, stride, locref_stdev);
}

// ---- frame resizing ------------------------------------------------------------------------
/// The two source positions and the weight of the second for output position `out` when `in_size`
/// pixels are resized to `out_size`: OpenCV's INTER_LINEAR (pixel centres aligned, borders
/// replicated). Equal sizes copy exactly.
struct LinearTap {
  std::int64_t first = 0, second = 0;
  float weight = 0.0F;  // of `second`
};

__host__ __device__ inline LinearTap linear_tap(std::int64_t out, std::int64_t in_size,
                                                std::int64_t out_size) {
  LinearTap tap;
  if (in_size == out_size) {
    tap.first = tap.second = out;
    return tap;
  }
  const double scale = 1.0 / (static_cast<double>(out_size) / static_cast<double>(in_size));
  float f = static_cast<float>((static_cast<double>(out) + 0.5) * scale - 0.5);
  std::int64_t s = static_cast<std::int64_t>(floorf(f));
  f -= static_cast<float>(s);
  if (s < 0) {
    s = 0;
    f = 0.0F;
  }
  if (s >= in_size - 1) {
    s = in_size - 1;
    f = 0.0F;
  }
  tap.first = s;
  tap.second = s + 1 < in_size ? s + 1 : s;
  tap.weight = f;
  return tap;
}

/// Channel `channel` of output pixel (n, p, q) of frames (N, in_h, in_w, 3) of bytes resized to
/// out_h x out_w: rows interpolated first, then between them (OpenCV's order).
__host__ __device__ inline float frame_sample(const std::uint8_t* frames, std::int64_t in_h,
                                              std::int64_t in_w, std::int64_t out_h,
                                              std::int64_t out_w, std::int64_t n, std::int64_t p,
                                              std::int64_t q, int channel) {
  const LinearTap ty = linear_tap(p, in_h, out_h), tx = linear_tap(q, in_w, out_w);
  const std::uint8_t* image = frames + n * in_h * in_w * 3;
  const auto at = [&](std::int64_t h, std::int64_t w) {
    return static_cast<float>(image[(h * in_w + w) * 3 + channel]);
  };
  const float top =
      at(ty.first, tx.first) * (1.0F - tx.weight) + at(ty.first, tx.second) * tx.weight;
  const float bottom =
      at(ty.second, tx.first) * (1.0F - tx.weight) + at(ty.second, tx.second) * tx.weight;
  return top * (1.0F - ty.weight) + bottom * ty.weight;
}

/// Per-channel affine map of uploaded frames, in output (RGB) channel order.
struct FrameAffine {
  float scale[3] = {1.0F, 1.0F, 1.0F};
  float shift[3] = {0.0F, 0.0F, 0.0F};
  bool bgr = true;  // the frames' bytes are B, G, R (OpenCV, FFmpeg's bgr24)
};

/// Element `i` of images (N, P, Q, 3) (NHWC of the logical (N, 3, P, Q)) made from frames
/// (N, H, W, 3): resized, channels in RGB order, then value * scale + shift.
__host__ __device__ inline float image_element(std::int64_t i, const std::uint8_t* frames,
                                               std::int64_t in_h, std::int64_t in_w,
                                               std::int64_t out_h, std::int64_t out_w,
                                               const FrameAffine& affine) {
  const std::int64_t pixel = i / 3;
  const int c = static_cast<int>(i - pixel * 3);
  const std::int64_t image_row = pixel / out_w, q = pixel - image_row * out_w;
  const std::int64_t n = image_row / out_h, p = image_row - n * out_h;
  const float value =
      frame_sample(frames, in_h, in_w, out_h, out_w, n, p, q, affine.bgr ? 2 - c : c);
  return value * affine.scale[c] + affine.shift[c];
}

}  // namespace labpose::cuda
