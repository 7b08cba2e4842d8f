// CUDA convolution and transposed convolution on cuDNN (fp32, strict or TF32; or bf16 with fp32
// sums on a backend training in bf16, whose weights are narrowed as they are reordered and whose
// weight gradients are widened back). A transposed
// convolution is its forward convolution run backwards (forward = backward data, backward data =
// forward, backward weights = backward filter with the operands swapped). Weights are reordered
// from PyTorch's (K, C/g, R, S) to cuDNN's (K, R, S, C/g) on every call, asymmetric padding becomes
// an explicit pad or crop (conv_geometry.hpp), bias gradients are an own deterministic channel sum.
#include <fmt/core.h>

#include "core/console.hpp"
#include "core/error.hpp"
#include "cuda/cudnn_conv.hpp"
#include "cuda/kernels.hpp"
#include "cuda/operands.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {
namespace {

using nets::ConvGeometry;
using nets::Shape;
using nets::Storage;
using nets::Tensor;
using State = CudaBackend::State;

struct ConvEntry : CacheEntry {
  std::unique_ptr<CudnnConv> conv;
};

std::string geometry_key(const ConvGeometry& g) {
  return fmt::format("s{}x{}p{},{},{},{}d{}x{}g{}o{}x{}", g.stride_h, g.stride_w, g.pad_top,
                     g.pad_left, g.pad_bottom, g.pad_right, g.dilation_h, g.dilation_w, g.groups,
                     g.output_pad_h, g.output_pad_w);
}

std::size_t bytes_in(const Shape& shape, DataType type) {
  return static_cast<std::size_t>(shape.elements()) * bytes_of(type);
}

// The cached cuDNN primitive for this geometry in the backend's training type (fp32 in its fp32
// math). Where cuDNN has no bf16 algorithm for a shape, that layer computes in fp32, said once.
// conv.type is what the operands must be; the algorithm may change once to a fallback, hence not
// const.
CudnnConv& training_conv(State& s, ConvPrimitive primitive, const CudnnConvGeometry& geometry,
                         const std::string& context) {
  const std::string key = fmt::format("conv{}|{}|{}|{}|{}", static_cast<int>(primitive),
                                      geometry.padded_in.text(), geometry.conv_out.text(),
                                      geometry.filter.text(), geometry_key(geometry.symmetric));
  return *s.cached<ConvEntry>(key, [&] {
             auto entry = std::make_unique<ConvEntry>();
             try {
               entry->conv = make_cudnn_conv(s.cudnn.get(), geometry,
                                             s.conv_settings(s.training_type), primitive, context);
             } catch (const Error& error) {
               if (s.training_type == DataType::f32) throw;
               console::warn("{}; this layer computes in fp32", error.what());
               entry->conv = make_cudnn_conv(s.cudnn.get(), geometry,
                                             s.conv_settings(DataType::f32), primitive, context);
             }
             return entry;
           }).conv;
}

// The backend's shared cuDNN workspace, grown to what an algorithm asks.
WorkspaceFor training_workspace(State& s) {
  return [&s](std::size_t bytes) { return s.workspace(bytes); };
}

// w: (K, C/g, R, S) floats -> a scratch copy in cuDNN's filter order (K, R, S, C/g) and `type`.
std::shared_ptr<Storage> cudnn_filter(State& s, const Tensor& w, DataType type) {
  LABPOSE_ASSERT(w.layout() == nets::Layout::flat && w.shape().rank() == 4);
  const Shape& ws = w.shape();
  auto filter = s.scratch(bytes_in(ws, type));
  kernels::nchw_to_nhwc(device_data(w), type, filter->data(), ws[0], ws[1], ws[2] * ws[3],
                        s.queue());
  return filter;
}

// conv_in as cuDNN reads it in `type`: the tensor itself, or a converted or padded copy.
class PaddedInput {
 public:
  PaddedInput(State& s, const CudnnConvGeometry& g, const Tensor& conv_in, DataType type)
      : input_(s, conv_in, type) {
    data_ = input_.data();
    if (!g.explicit_padding()) return;
    padded_ = s.scratch(bytes_in(g.padded_in, type));
    kernels::window_copy(type, input_.data(), padded_->data(), g.conv_in.n(), g.pad(), s.queue());
    data_ = padded_->data();
  }
  const void* data() const { return data_; }

 private:
  InputAs input_;
  std::shared_ptr<Storage> padded_;
  const void* data_ = nullptr;
};

// conv_out = conv(conv_in, w), computed in the backend's training type.
void forward_convolution(State& s, const CudnnConvGeometry& g, const Tensor& conv_in,
                         const Tensor& w, Tensor& conv_out, const std::string& context) {
  CudnnConv& conv = training_conv(s, ConvPrimitive::forward, g, context);
  const DataType type = conv.type;
  const PaddedInput in(s, g, conv_in, type);
  const auto filter = cudnn_filter(s, w, type);
  OutputAs out(s, conv_out, type);
  run_forward(s.cudnn.get(), conv, in.data(), filter->data(), out.data(), training_workspace(s),
              context);
  out.finish();
}

// conv_in_gradient = conv^T(conv_out_gradient, w).
void backward_data_convolution(State& s, const CudnnConvGeometry& g,
                               const Tensor& conv_out_gradient, const Tensor& w,
                               Tensor& conv_in_gradient, const std::string& context) {
  CudnnConv& conv = training_conv(s, ConvPrimitive::backward_data, g, context);
  const DataType type = conv.type;
  const auto filter = cudnn_filter(s, w, type);
  const InputAs out_gradient(s, conv_out_gradient, type);
  OutputAs in_gradient(s, conv_in_gradient, type);
  std::shared_ptr<Storage> padded;
  void* target = in_gradient.data();
  if (g.explicit_padding()) {
    padded = s.scratch(bytes_in(g.padded_in, type));
    target = padded->data();
  }
  run_backward_data(s.cudnn.get(), conv, out_gradient.data(), filter->data(), target,
                    training_workspace(s), context);
  if (g.explicit_padding()) {
    kernels::window_copy(type, target, in_gradient.data(), g.conv_in.n(), g.crop(), s.queue());
  }
  in_gradient.finish();
}

// dw (K, C/g, R, S) floats = the filter gradient of conv_out = conv(conv_in, w).
void backward_filter_convolution(State& s, const CudnnConvGeometry& g, const Tensor& conv_in,
                                 const Tensor& conv_out_gradient, Tensor& dw,
                                 const std::string& context) {
  LABPOSE_ASSERT(dw.layout() == nets::Layout::flat);
  CudnnConv& conv = training_conv(s, ConvPrimitive::backward_filter, g, context);
  const DataType type = conv.type;
  const PaddedInput in(s, g, conv_in, type);
  const InputAs out_gradient(s, conv_out_gradient, type);
  const Shape& ws = dw.shape();
  const auto filter_gradient = s.scratch(bytes_in(ws, type));
  run_backward_filter(s.cudnn.get(), conv, in.data(), out_gradient.data(), filter_gradient->data(),
                      training_workspace(s), context);
  kernels::nhwc_to_nchw(type, filter_gradient->data(), device_data(dw), ws[0], ws[1], ws[2] * ws[3],
                        s.queue());
}

void add_bias(State& s, const Tensor& bias, Tensor& y) {
  if (bias.empty()) return;
  const Shape& ys = y.shape();
  kernels::bias_activation(data_type(y), device_bytes(y), device_data(bias), nullptr,
                           ys.n() * ys.h() * ys.w(), ys.c(), -1.0F, -1.0F, s.queue());
}

void bias_gradient(State& s, const Tensor& dy, Tensor& dbias) {
  if (dbias.empty()) return;
  const Shape& ys = dy.shape();
  const std::int64_t rows = ys.n() * ys.h() * ys.w();
  const auto scratch =
      s.scratch(static_cast<std::size_t>(kernels::channel_reduction_scratch_count(rows, ys.c())) *
                sizeof(double));
  kernels::bias_gradient(data_type(dy), device_bytes(dy), device_data(dbias), rows, ys.c(),
                         reinterpret_cast<double*>(scratch->data()), s.queue());
}

}  // namespace

void CudaBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                 const ConvGeometry& g) {
  check_shape("conv2d_forward", "y", y.shape(), conv2d_output_shape(x.shape(), w.shape(), g));
  const std::string context =
      fmt::format("conv2d_forward ({})", shapes_text({{"x", &x}, {"w", &w}, {"y", &y}}));
  State& s = state();
  s.activate();
  forward_convolution(s, cudnn_conv_geometry(x.shape(), y.shape(), w.shape(), g), x, w, y, context);
  add_bias(s, bias, y);
}

void CudaBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                       const ConvGeometry& g) {
  check_shape("conv2d_backward_data", "dy", dy.shape(),
              conv2d_output_shape(dx.shape(), w.shape(), g));
  const std::string context =
      fmt::format("conv2d_backward_data ({})", shapes_text({{"dy", &dy}, {"w", &w}, {"dx", &dx}}));
  State& s = state();
  s.activate();
  backward_data_convolution(s, cudnn_conv_geometry(dx.shape(), dy.shape(), w.shape(), g), dy, w, dx,
                            context);
}

void CudaBackend::conv2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                          Tensor& dbias, const ConvGeometry& g) {
  check_shape("conv2d_backward_weights", "dy", dy.shape(),
              conv2d_output_shape(x.shape(), dw.shape(), g));
  const std::string context = fmt::format("conv2d_backward_weights ({})",
                                          shapes_text({{"x", &x}, {"dy", &dy}, {"dw", &dw}}));
  State& s = state();
  s.activate();
  backward_filter_convolution(s, cudnn_conv_geometry(x.shape(), dy.shape(), dw.shape(), g), x, dy,
                              dw, context);
  bias_gradient(s, dy, dbias);
}

void CudaBackend::conv_transpose2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias,
                                           Tensor& y, const ConvGeometry& g) {
  check_shape("conv_transpose2d_forward", "y", y.shape(),
              conv_transpose2d_output_shape(x.shape(), w.shape(), g));
  const std::string context =
      fmt::format("conv_transpose2d_forward ({})", shapes_text({{"x", &x}, {"w", &w}, {"y", &y}}));
  State& s = state();
  s.activate();
  backward_data_convolution(s, cudnn_conv_geometry(y.shape(), x.shape(), w.shape(), g), x, w, y,
                            context);
  add_bias(s, bias, y);
}

void CudaBackend::conv_transpose2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                                 const ConvGeometry& g) {
  check_shape("conv_transpose2d_backward_data", "dy", dy.shape(),
              conv_transpose2d_output_shape(dx.shape(), w.shape(), g));
  const std::string context = fmt::format("conv_transpose2d_backward_data ({})",
                                          shapes_text({{"dy", &dy}, {"w", &w}, {"dx", &dx}}));
  State& s = state();
  s.activate();
  forward_convolution(s, cudnn_conv_geometry(dy.shape(), dx.shape(), w.shape(), g), dy, w, dx,
                      context);
}

void CudaBackend::conv_transpose2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                    Tensor& dbias, const ConvGeometry& g) {
  check_shape("conv_transpose2d_backward_weights", "dy", dy.shape(),
              conv_transpose2d_output_shape(x.shape(), dw.shape(), g));
  const std::string context = fmt::format("conv_transpose2d_backward_weights ({})",
                                          shapes_text({{"x", &x}, {"dy", &dy}, {"dw", &dw}}));
  State& s = state();
  s.activate();
  backward_filter_convolution(s, cudnn_conv_geometry(dy.shape(), x.shape(), dw.shape(), g), dy, x,
                              dw, context);
  bias_gradient(s, dy, dbias);
}

}  // namespace labpose::cuda
