// DeepLabCut's pose-specific work on the GPU, for the training loop and video analysis to call:
// target maps built from keypoints, peaks found and decoded on the device (only keypoints come
// back to the host), and 8-bit frames uploaded once per batch, resized and normalized into the
// network's input. A cuda-side API on purpose: the Backend interface stays free of pose concepts
// until the training and analysis code decide how to call these on every device.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/backend.hpp"
#include "cuda/pose_math.hpp"

namespace labpose::cuda {

struct PoseGeometry {
  float stride = 8.0F;           // image pixels per score-map cell
  float locref_stdev = 7.2801F;  // location-refinement scale (DeepLabCut's locref_stdev)
};

/// DeepLabCut's single-animal targets (DESIGN.md "Targets, loss, decoding").
/// keypoints: host (N, J, 2) image pixels, NaN for a missing keypoint (negative everywhere);
/// radii: host (N), pos_dist_thresh x the image's augmentation scale.
/// score: (N, J, P, Q), locref and locref_weights: (N, 2J, P, Q), tensors of `backend`,
/// overwritten.
void build_targets(CudaBackend& backend, const std::vector<float>& keypoints,
                   const std::vector<float>& radii, const PoseGeometry& geometry,
                   nets::Tensor& score, nets::Tensor& locref, nets::Tensor& locref_weights);

/// The best cell of each score map (row-major first maximum), refined by the location-refinement
/// map and decoded to pixels; likelihood = sigmoid(logit).
/// score: (N, J, P, Q) logits; locref: (N, 2J, P, Q), or an empty tensor for none.
/// Returns N x J keypoints (image-major); waits for the GPU.
std::vector<Keypoint> find_peaks(CudaBackend& backend, const nets::Tensor& score,
                                 const nets::Tensor& locref, const PoseGeometry& geometry);

/// frames: host (N, H, W, 3) bytes, copied to the GPU once -> images: (N, 3, P, Q), resized
/// bilinearly (OpenCV's INTER_LINEAR) when P x Q differs from H x W, in RGB order, times
/// affine.scale plus affine.shift (DeepLabCut's ResNets: scale 1, shift -mean_pixel).
void upload_frames(CudaBackend& backend, const std::uint8_t* frames, std::int64_t count,
                   std::int64_t height, std::int64_t width, const FrameAffine& affine,
                   nets::Tensor& images);

}  // namespace labpose::cuda
