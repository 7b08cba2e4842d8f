// Reference convolution and transposed convolution: the definitions, looped directly, summed in
// double.
#include <vector>

#include "nets/ref/backend.hpp"

namespace labpose::nets::ref {
namespace {

// The taps of a convolution, a row at a time: calls
// visit(n, k, c, cc, r, s, p, h, q_begin, q_end, w_begin) for every output row p of output channel
// k and filter tap (c, r, s) whose input row h lies inside the image; the output columns q in
// [q_begin, q_end) are those whose input column w = q * stride_w - pad_left + s * dilation_w lies
// inside it, w_begin the input column of q_begin (so that pointers never point before an image's
// start). cc is c's index within its group.
// Convolution and transposed convolution are the same taps read in opposite directions.
template <typename Visit>
void for_each_tap_row(const Shape& x, const Shape& y, std::int64_t kernel_h, std::int64_t kernel_w,
                      std::int64_t channels_per_group, std::int64_t outputs_per_group,
                      const ConvGeometry& g, Visit visit) {
  // The valid output columns of each filter column s, and the input row of each (r, p) (-1
  // outside).
  std::vector<std::int64_t> q_begin(static_cast<std::size_t>(kernel_w)),
      q_end(static_cast<std::size_t>(kernel_w));
  for (std::int64_t s = 0; s < kernel_w; ++s) {
    const std::int64_t offset = s * g.dilation_w - g.pad_left;  // w = q * stride + offset
    std::int64_t begin = 0, end = y.w();
    while (begin < end && begin * g.stride_w + offset < 0) ++begin;
    while (end > begin && (end - 1) * g.stride_w + offset >= x.w()) --end;
    q_begin[static_cast<std::size_t>(s)] = begin;
    q_end[static_cast<std::size_t>(s)] = end;
  }
  std::vector<std::int64_t> row(static_cast<std::size_t>(kernel_h * y.h()));
  for (std::int64_t r = 0; r < kernel_h; ++r) {
    for (std::int64_t p = 0; p < y.h(); ++p) {
      const std::int64_t h = p * g.stride_h - g.pad_top + r * g.dilation_h;
      row[static_cast<std::size_t>(r * y.h() + p)] = h >= 0 && h < x.h() ? h : -1;
    }
  }
  for (std::int64_t n = 0; n < x.n(); ++n) {
    for (std::int64_t k = 0; k < y.c(); ++k) {
      const std::int64_t group = k / outputs_per_group;
      for (std::int64_t cc = 0; cc < channels_per_group; ++cc) {
        const std::int64_t c = group * channels_per_group + cc;
        for (std::int64_t r = 0; r < kernel_h; ++r) {
          for (std::int64_t s = 0; s < kernel_w; ++s) {
            const auto begin = q_begin[static_cast<std::size_t>(s)],
                       end = q_end[static_cast<std::size_t>(s)];
            if (begin >= end) continue;
            const std::int64_t first = begin * g.stride_w + s * g.dilation_w - g.pad_left;
            for (std::int64_t p = 0; p < y.h(); ++p) {
              const std::int64_t h = row[static_cast<std::size_t>(r * y.h() + p)];
              if (h >= 0) visit(n, k, c, cc, r, s, p, h, begin, end, first);
            }
          }
        }
      }
    }
  }
}

std::int64_t at4(const Shape& s, std::int64_t a, std::int64_t b, std::int64_t c, std::int64_t d) {
  return ((a * s[1] + b) * s[2] + c) * s[3] + d;
}

void store(const std::vector<double>& sums, Tensor& out) {
  for (std::size_t i = 0; i < sums.size(); ++i) out.data()[i] = static_cast<float>(sums[i]);
}

// sums[n, k, p, q] += bias[k] (NCHW), when there is a bias.
void add_bias(std::vector<double>& sums, const Tensor& bias, const Shape& ys) {
  if (bias.empty()) return;
  for (std::int64_t i = 0; i < ys.elements(); ++i) {
    sums[static_cast<std::size_t>(i)] += double{bias.data()[(i / (ys.h() * ys.w())) % ys.c()]};
  }
}

// dbias[k] = sum of dy[:, k] (NCHW), when a bias gradient is wanted.
void bias_gradient(const Tensor& dy, Tensor& dbias) {
  if (dbias.empty()) return;
  const Shape& ys = dy.shape();
  std::vector<double> sums(static_cast<std::size_t>(ys.c()), 0.0);
  for (std::int64_t i = 0; i < ys.elements(); ++i) {
    sums[static_cast<std::size_t>((i / (ys.h() * ys.w())) % ys.c())] += double{dy.data()[i]};
  }
  store(sums, dbias);
}

}  // namespace

void RefBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                const ConvGeometry& g) {
  const Shape xs = x.shape(), ws = w.shape(), ys = conv2d_output_shape(xs, ws, g);
  check_shape("conv2d_forward", "y", y.shape(), ys);
  std::vector<double> sums(static_cast<std::size_t>(ys.elements()), 0.0);
  for_each_tap_row(xs, ys, ws[2], ws[3], ws[1], ws[0] / g.groups, g,
                   [&](auto n, auto k, auto c, auto cc, auto r, auto s, auto p, auto h, auto q0,
                       auto q1, auto first) {
                     const double weight = w.data()[at4(ws, k, cc, r, s)];
                     double* out = &sums[static_cast<std::size_t>(at4(ys, n, k, p, 0))];
                     const float* in = x.data() + at4(xs, n, c, h, first);
                     for (auto q = q0; q < q1; ++q)
                       out[q] += double{in[(q - q0) * g.stride_w]} * weight;
                   });
  add_bias(sums, bias, ys);
  store(sums, y);
}

void RefBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                      const ConvGeometry& g) {
  const Shape ys = dy.shape(), ws = w.shape(), xs = dx.shape();
  check_shape("conv2d_backward_data", "dy", ys, conv2d_output_shape(xs, ws, g));
  std::vector<double> sums(static_cast<std::size_t>(xs.elements()), 0.0);
  for_each_tap_row(xs, ys, ws[2], ws[3], ws[1], ws[0] / g.groups, g,
                   [&](auto n, auto k, auto c, auto cc, auto r, auto s, auto p, auto h, auto q0,
                       auto q1, auto first) {
                     const double weight = w.data()[at4(ws, k, cc, r, s)];
                     double* out = &sums[static_cast<std::size_t>(at4(xs, n, c, h, first))];
                     const float* in = dy.data() + at4(ys, n, k, p, 0);
                     for (auto q = q0; q < q1; ++q)
                       out[(q - q0) * g.stride_w] += double{in[q]} * weight;
                   });
  store(sums, dx);
}

void RefBackend::conv2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                         Tensor& dbias, const ConvGeometry& g) {
  const Shape xs = x.shape(), ys = dy.shape(), ws = dw.shape();
  check_shape("conv2d_backward_weights", "dy", ys, conv2d_output_shape(xs, ws, g));
  std::vector<double> sums(static_cast<std::size_t>(ws.elements()), 0.0);
  for_each_tap_row(xs, ys, ws[2], ws[3], ws[1], ws[0] / g.groups, g,
                   [&](auto n, auto k, auto c, auto cc, auto r, auto s, auto p, auto h, auto q0,
                       auto q1, auto first) {
                     const float* in = x.data() + at4(xs, n, c, h, first);
                     const float* gradient = dy.data() + at4(ys, n, k, p, 0);
                     double sum = 0.0;
                     for (auto q = q0; q < q1; ++q)
                       sum += double{in[(q - q0) * g.stride_w]} * double{gradient[q]};
                     sums[static_cast<std::size_t>(at4(ws, k, cc, r, s))] += sum;
                   });
  store(sums, dw);
  bias_gradient(dy, dbias);
}

// A transposed convolution maps x (its input) to y exactly as a convolution maps y to x: the taps
// are those of a convolution from y-shaped "inputs" to x-shaped "outputs", with the weight roles
// of input and output channels swapped (PyTorch layout (C_in, K/groups, R, S)).
void RefBackend::conv_transpose2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias,
                                          Tensor& y, const ConvGeometry& g) {
  const Shape xs = x.shape(), ws = w.shape(), ys = conv_transpose2d_output_shape(xs, ws, g);
  check_shape("conv_transpose2d_forward", "y", y.shape(), ys);
  std::vector<double> sums(static_cast<std::size_t>(ys.elements()), 0.0);
  for_each_tap_row(ys, xs, ws[2], ws[3], ws[1], ws[0] / g.groups, g,
                   [&](auto n, auto c, auto k, auto kk, auto r, auto s, auto h, auto p, auto w0,
                       auto w1, auto first) {
                     const double weight = w.data()[at4(ws, c, kk, r, s)];
                     double* out = &sums[static_cast<std::size_t>(at4(ys, n, k, p, first))];
                     const float* in = x.data() + at4(xs, n, c, h, 0);
                     for (auto wi = w0; wi < w1; ++wi)
                       out[(wi - w0) * g.stride_w] += double{in[wi]} * weight;
                   });
  add_bias(sums, bias, ys);
  store(sums, y);
}

void RefBackend::conv_transpose2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                                const ConvGeometry& g) {
  const Shape ys = dy.shape(), ws = w.shape(), xs = dx.shape();
  check_shape("conv_transpose2d_backward_data", "dy", ys, conv_transpose2d_output_shape(xs, ws, g));
  std::vector<double> sums(static_cast<std::size_t>(xs.elements()), 0.0);
  for_each_tap_row(ys, xs, ws[2], ws[3], ws[1], ws[0] / g.groups, g,
                   [&](auto n, auto c, auto k, auto kk, auto r, auto s, auto h, auto p, auto w0,
                       auto w1, auto first) {
                     const double weight = w.data()[at4(ws, c, kk, r, s)];
                     double* out = &sums[static_cast<std::size_t>(at4(xs, n, c, h, 0))];
                     const float* in = dy.data() + at4(ys, n, k, p, first);
                     for (auto wi = w0; wi < w1; ++wi)
                       out[wi] += double{in[(wi - w0) * g.stride_w]} * weight;
                   });
  store(sums, dx);
}

void RefBackend::conv_transpose2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                   Tensor& dbias, const ConvGeometry& g) {
  const Shape xs = x.shape(), ys = dy.shape(), ws = dw.shape();
  check_shape("conv_transpose2d_backward_weights", "dy", ys,
              conv_transpose2d_output_shape(xs, ws, g));
  std::vector<double> sums(static_cast<std::size_t>(ws.elements()), 0.0);
  for_each_tap_row(ys, xs, ws[2], ws[3], ws[1], ws[0] / g.groups, g,
                   [&](auto n, auto c, auto k, auto kk, auto r, auto s, auto h, auto p, auto w0,
                       auto w1, auto first) {
                     const float* in = x.data() + at4(xs, n, c, h, 0);
                     const float* gradient = dy.data() + at4(ys, n, k, p, first);
                     double sum = 0.0;
                     for (auto wi = w0; wi < w1; ++wi)
                       sum += double{in[wi]} * double{gradient[(wi - w0) * g.stride_w]};
                     sums[static_cast<std::size_t>(at4(ws, c, kk, r, s))] += sum;
                   });
  store(sums, dw);
  bias_gradient(dy, dbias);
}

}  // namespace labpose::nets::ref
