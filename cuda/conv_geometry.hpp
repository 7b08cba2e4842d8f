// How a (transposed) convolution maps onto cuDNN's legacy convolution, which pads only
// symmetrically: both are described by their forward convolution conv_in -> conv_out (for a
// transposed one conv_in is its output y); cuDNN gets the symmetric part of the padding and the
// asymmetric rest (TensorFlow "same") becomes an explicit pad of conv_in, or a crop after cuDNN.
// Plain C++, tested on the CPU against the reference backend (tests/cuda/device_math_test.cpp).
#pragma once

#include "cuda/layout_math.hpp"
#include "nets/backend.hpp"

namespace labpose::cuda {

struct CudnnConvGeometry {
  nets::Shape conv_in;           // (N, C, H, W) of the forward convolution, unpadded
  nets::Shape padded_in;         // what cuDNN sees: conv_in with the asymmetric remainder added
  nets::Shape conv_out;          // (N, K, P, Q)
  nets::Shape filter;            // (K, C/groups, R, S)
  nets::ConvGeometry symmetric;  // the geometry cuDNN gets (pad_top == pad_bottom, ...)
  std::int64_t extra_top = 0, extra_left = 0;  // explicit padding before (the rest goes after)

  bool explicit_padding() const { return padded_in != conv_in; }
  /// conv_in -> padded_in (zeros around).
  WindowCopy pad() const;
  /// padded_in -> conv_in.
  WindowCopy crop() const;
};

/// For conv2d: conv_in = x, conv_out = y, w: (K, C/g, R, S). For conv_transpose2d: conv_in = y,
/// conv_out = x, w: PyTorch's (C_in, K/g, R, S), which is exactly the forward convolution's filter.
CudnnConvGeometry cudnn_conv_geometry(const nets::Shape& conv_in, const nets::Shape& conv_out,
                                      const nets::Shape& w, const nets::ConvGeometry& geometry);

}  // namespace labpose::cuda
