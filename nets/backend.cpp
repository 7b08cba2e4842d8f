// Shape arithmetic shared by every backend.
#include "nets/backend.hpp"

#include <fmt/core.h>

#include <vector>

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

namespace {

// The host's readback: the copy is made at start().
class HostCopyReadback final : public HostReadback {
 public:
  HostCopyReadback(Backend& backend, std::int64_t count)
      : backend_(backend), values_(static_cast<std::size_t>(count)) {}
  void start(const Tensor& t) override {
    LABPOSE_ASSERT(t.elements() == static_cast<std::int64_t>(values_.size()));
    backend_.copy_to_host(t, values_.data());
  }
  std::span<const float> values() override { return values_; }

 private:
  Backend& backend_;
  std::vector<float> values_;
};

// sums[at] = value, through the host.
void put_sum(Backend& backend, Tensor& sums, std::int64_t at, double value) {
  LABPOSE_ASSERT(at >= 0 && at < sums.elements());
  std::vector<float> host(static_cast<std::size_t>(sums.elements()));
  backend.copy_to_host(sums, host.data());
  host[static_cast<std::size_t>(at)] = static_cast<float>(value);
  backend.copy_from_host(host.data(), sums);
}

}  // namespace

std::unique_ptr<HostReadback> Backend::make_readback(std::int64_t count) {
  return std::make_unique<HostCopyReadback>(*this, count);
}

std::unique_ptr<RecordedWork> Backend::record(const std::function<void()>&, std::string& why_not) {
  why_not = name() + " runs its ops one by one (it records none)";
  return nullptr;
}

void Backend::sigmoid_cross_entropy_sum(const Tensor& logits, const Tensor& targets,
                                        const Tensor& weights, Tensor& sums, std::int64_t at) {
  put_sum(*this, sums, at, sigmoid_cross_entropy_forward(logits, targets, weights));
}

void Backend::huber_sum(const Tensor& predictions, const Tensor& targets, const Tensor& weights,
                        float delta, Tensor& sums, std::int64_t at) {
  put_sum(*this, sums, at, huber_forward(predictions, targets, weights, delta));
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
