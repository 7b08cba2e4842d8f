// Splitting convolution padding between cuDNN and an explicit pad.
#include "cuda/conv_geometry.hpp"

#include <algorithm>

namespace labpose::cuda {

CudnnConvGeometry cudnn_conv_geometry(const nets::Shape& conv_in, const nets::Shape& conv_out,
                                      const nets::Shape& w, const nets::ConvGeometry& g) {
  CudnnConvGeometry result;
  result.conv_in = conv_in;
  result.conv_out = conv_out;
  result.filter = w;
  const int pad_h = std::min(g.pad_top, g.pad_bottom), pad_w = std::min(g.pad_left, g.pad_right);
  result.symmetric = g;
  result.symmetric.pad_top = result.symmetric.pad_bottom = pad_h;
  result.symmetric.pad_left = result.symmetric.pad_right = pad_w;
  result.extra_top = g.pad_top - pad_h;
  result.extra_left = g.pad_left - pad_w;
  result.padded_in = nets::Shape{conv_in.n(), conv_in.c(),
                                 conv_in.h() + (g.pad_top - pad_h) + (g.pad_bottom - pad_h),
                                 conv_in.w() + (g.pad_left - pad_w) + (g.pad_right - pad_w)};
  return result;
}

WindowCopy CudnnConvGeometry::pad() const {
  return {conv_in.c(),   conv_in.h(), conv_in.w(), padded_in.h(),
          padded_in.w(), -extra_top,  -extra_left};
}

WindowCopy CudnnConvGeometry::crop() const {
  return {conv_in.c(), padded_in.h(), padded_in.w(), conv_in.h(),
          conv_in.w(), extra_top,     extra_left};
}

}  // namespace labpose::cuda
