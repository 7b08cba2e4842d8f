// Backend::find_peaks on host memory, for the reference and the CPU backends: the first maximum of
// each score map, in either activation layout. Not the keypoints' arithmetic (the pipeline's
// decode.hpp) and not the GPU's kernel (cuda/peaks.cu).
#pragma once

#include "nets/tensor.hpp"

namespace labpose::nets {

/// Checks the shapes of find_peaks' operands and throws an Error naming them when they disagree.
void check_peak_shapes(const Tensor& score, const Tensor& locref, const Tensor& peaks);

/// find_peaks on host tensors (NCHW or NHWC); `parallel` runs the (n, j) maps on OpenMP threads.
void find_peaks_on_host(const Tensor& score, const Tensor& locref, Tensor& peaks, bool parallel);

}  // namespace labpose::nets
