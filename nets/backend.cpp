// Shape arithmetic shared by every backend.
#include "nets/backend.hpp"

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose::nets {

ConvGeometry ConvGeometry::symmetric(int stride, int pad, int dilation, int groups) {
  ConvGeometry geometry;
  geometry.stride_h = geometry.stride_w = stride;
  geometry.pad_top = geometry.pad_left = geometry.pad_bottom = geometry.pad_right = pad;
  geometry.dilation_h = geometry.dilation_w = dilation;
  geometry.groups = groups;
  return geometry;
}

std::int64_t conv_output_size(std::int64_t input, std::int64_t filter, int stride, int pad_before,
                              int pad_after, int dilation) {
  const std::int64_t span = static_cast<std::int64_t>(dilation) * (filter - 1) + 1;
  const std::int64_t padded = input + pad_before + pad_after;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

std::int64_t conv_transpose_output_size(std::int64_t input, std::int64_t filter, int stride,
                                        int pad_before, int pad_after, int dilation,
                                        int output_pad) {
  return (input - 1) * stride - pad_before - pad_after +
         static_cast<std::int64_t>(dilation) * (filter - 1) + output_pad + 1;
}

Shape conv2d_output_shape(const Shape& x, const Shape& w, const ConvGeometry& g) {
  return Shape{x.n(), w[0],
               conv_output_size(x.h(), w[2], g.stride_h, g.pad_top, g.pad_bottom, g.dilation_h),
               conv_output_size(x.w(), w[3], g.stride_w, g.pad_left, g.pad_right, g.dilation_w)};
}

Shape conv_transpose2d_output_shape(const Shape& x, const Shape& w, const ConvGeometry& g) {
  return Shape{x.n(), w[1] * g.groups,
               conv_transpose_output_size(x.h(), w[2], g.stride_h, g.pad_top, g.pad_bottom,
                                          g.dilation_h, g.output_pad_h),
               conv_transpose_output_size(x.w(), w[3], g.stride_w, g.pad_left, g.pad_right,
                                          g.dilation_w, g.output_pad_w)};
}

Shape max_pool_output_shape(const Shape& x, const PoolGeometry& g) {
  return Shape{x.n(), x.c(),
               conv_output_size(x.h(), g.kernel_h, g.stride_h, g.pad_top, g.pad_bottom, 1),
               conv_output_size(x.w(), g.kernel_w, g.stride_w, g.pad_left, g.pad_right, 1)};
}

void Backend::conv2d_forward_training(const Tensor& x, const Tensor& w, const Tensor& bias,
                                      Tensor& y, const ConvGeometry& geometry,
                                      std::unique_ptr<SavedInput>& saved) {
  saved.reset();
  conv2d_forward(x, w, bias, y, geometry);
}

void Backend::conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor* dx,
                              Tensor& dw, Tensor& dbias, const ConvGeometry& geometry,
                              const SavedInput*) {
  conv2d_backward_weights(x, dy, dw, dbias, geometry);
  if (dx != nullptr) conv2d_backward_data(dy, w, *dx, geometry);
}

void Backend::conv_transpose2d_forward_training(const Tensor& x, const Tensor& w,
                                                const Tensor& bias, Tensor& y,
                                                const ConvGeometry& geometry,
                                                std::unique_ptr<SavedInput>& saved) {
  saved.reset();
  conv_transpose2d_forward(x, w, bias, y, geometry);
}

void Backend::conv_transpose2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w,
                                        Tensor* dx, Tensor& dw, Tensor& dbias,
                                        const ConvGeometry& geometry, const SavedInput*) {
  conv_transpose2d_backward_weights(x, dy, dw, dbias, geometry);
  if (dx != nullptr) conv_transpose2d_backward_data(dy, w, *dx, geometry);
}

void check_shape(const char* op, const char* what, const Shape& actual, const Shape& expected) {
  if (actual != expected) {
    throw Error(fmt::format("internal error: {}: {} has shape {}, expected {}", op, what,
                            actual.text(), expected.text()),
                "this is a bug in labpose, not in your data; please report it");
  }
}

}  // namespace labpose::nets
