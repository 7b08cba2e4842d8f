// CUDA ReLU, max pooling, addition and per-channel affine maps: own kernels (elementwise.cu) with
// the reference backend's exact rules (ReLU6 boundaries, the first maximum of a pooling window
// receives its gradient, asymmetric pooling padding), which cuDNN's activations and pooling do not
// promise. Each computes in its output's element type (fp32, or bf16 for the activations of a net
// training in bf16), converting an input of the other type first.
#include <fmt/core.h>

#include "core/error.hpp"
#include "cuda/kernels.hpp"
#include "cuda/operands.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {
namespace {

using nets::PoolGeometry;
using nets::Shape;
using nets::Tensor;

}  // namespace

PoolShape make_pool_shape(const Shape& x, const Shape& y, const PoolGeometry& g) {
  PoolShape s;
  s.batch = x.n();
  s.channels = x.c();
  s.in_h = x.h();
  s.in_w = x.w();
  s.out_h = y.h();
  s.out_w = y.w();
  s.kernel_h = g.kernel_h;
  s.kernel_w = g.kernel_w;
  s.stride_h = g.stride_h;
  s.stride_w = g.stride_w;
  s.pad_top = g.pad_top;
  s.pad_left = g.pad_left;
  return s;
}

namespace {

void check_same_layout(const char* op, const Tensor& a, const Tensor& b) {
  if (a.layout() != b.layout()) {
    throw Error(fmt::format("internal error: {}: operands have different memory layouts", op),
                "this is a bug in labpose, not in your data; please report it");
  }
}

}  // namespace

void CudaBackend::relu_forward(const Tensor& x, Tensor& y, float cap) {
  check_shape("relu_forward", "y", y.shape(), x.shape());
  check_same_layout("relu_forward", x, y);
  State& s = state();
  s.activate();
  const DataType type = data_type(y);
  const InputAs in(s, x, type);
  kernels::relu_forward(type, in.data(), device_bytes(y), x.elements(), cap, s.queue());
}

void CudaBackend::relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx, float cap) {
  check_shape("relu_backward", "dx", dx.shape(), y.shape());
  check_shape("relu_backward", "dy", dy.shape(), y.shape());
  check_same_layout("relu_backward", dy, y);
  State& s = state();
  s.activate();
  const DataType type = data_type(dx);
  const InputAs gradient(s, dy, type), output(s, y, type);
  kernels::relu_backward(type, gradient.data(), output.data(), device_bytes(dx), y.elements(), cap,
                         s.queue());
}

void CudaBackend::max_pool_forward(const Tensor& x, Tensor& y, const PoolGeometry& g) {
  check_shape("max_pool_forward", "y", y.shape(), max_pool_output_shape(x.shape(), g));
  State& s = state();
  s.activate();
  const DataType type = data_type(y);
  const InputAs in(s, x, type);
  kernels::max_pool_forward(type, in.data(), device_bytes(y),
                            make_pool_shape(x.shape(), y.shape(), g), s.queue());
}

void CudaBackend::max_pool_backward(const Tensor& dy, const Tensor& x, Tensor& dx,
                                    const PoolGeometry& g) {
  check_shape("max_pool_backward", "dy", dy.shape(), max_pool_output_shape(x.shape(), g));
  check_shape("max_pool_backward", "dx", dx.shape(), x.shape());
  State& s = state();
  s.activate();
  const DataType type = data_type(dx);
  const InputAs gradient(s, dy, type), input(s, x, type);
  kernels::max_pool_backward(type, gradient.data(), input.data(), device_bytes(dx),
                             make_pool_shape(x.shape(), dy.shape(), g), s.queue());
}

void CudaBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  check_shape("add", "b", b.shape(), a.shape());
  check_shape("add", "y", y.shape(), a.shape());
  check_same_layout("add", a, b);
  check_same_layout("add", a, y);
  State& s = state();
  s.activate();
  const DataType type = data_type(y);
  const InputAs first(s, a, type), second(s, b, type);
  kernels::add(type, first.data(), second.data(), device_bytes(y), a.elements(), s.queue());
}

void CudaBackend::channel_affine(const Tensor& x, const std::vector<float>& scale,
                                 const std::vector<float>& shift, Tensor& y) {
  check_shape("channel_affine", "y", y.shape(), x.shape());
  const Shape& shape = x.shape();
  LABPOSE_ASSERT(static_cast<std::int64_t>(scale.size()) == shape.c() &&
                 shift.size() == scale.size());
  LABPOSE_ASSERT(x.layout() == nets::Layout::nhwc && y.layout() == nets::Layout::nhwc);
  State& s = state();
  s.activate();
  const std::string context = fmt::format("channel_affine ({})", shape.text());
  kernels::channel_affine(data_type(x), device_bytes(x), data_type(y), device_bytes(y),
                          s.constant(scale, context), s.constant(shift, context),
                          shape.n() * shape.h() * shape.w(), shape.c(), s.queue());
}

}  // namespace labpose::cuda
