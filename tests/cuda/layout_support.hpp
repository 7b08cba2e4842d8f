// Host emulation of the CUDA backend's layout kernels for the CUDA tests: logical NCHW values to
// and from the NHWC order the backend stores, element by element with layout_math.hpp's functions.
#pragma once

#include <vector>

#include "cuda/layout_math.hpp"
#include "nets/tensor.hpp"

namespace labpose::cuda::testing {

/// NCHW values of shape s -> NHWC order (the body of the nchw_to_nhwc kernel).
inline std::vector<float> to_nhwc(const std::vector<float>& nchw, const nets::Shape& s) {
  std::vector<float> out(nchw.size());
  for (std::int64_t i = 0; i < s.elements(); ++i)
    out[static_cast<std::size_t>(i)] =
        nchw[static_cast<std::size_t>(nchw_index_of_nhwc(i, s.c(), s.h() * s.w()))];
  return out;
}

/// NHWC values of shape s -> NCHW order (the body of the nhwc_to_nchw kernel).
inline std::vector<float> to_nchw(const std::vector<float>& nhwc, const nets::Shape& s) {
  std::vector<float> out(nhwc.size());
  for (std::int64_t i = 0; i < s.elements(); ++i)
    out[static_cast<std::size_t>(i)] =
        nhwc[static_cast<std::size_t>(nhwc_index_of_nchw(i, s.c(), s.h() * s.w()))];
  return out;
}

}  // namespace labpose::cuda::testing
