// Helpers for the network-library tests: random tensors, host round trips, tolerant comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "devices/devices.hpp"
#include "nets/backend.hpp"
#include "nets/random.hpp"
#include "nets/ref/backend.hpp"

namespace labpose::nets::testing {

inline std::vector<float> random_values(std::int64_t count, std::uint64_t seed,
                                        double scale = 1.0) {
  Random random(seed);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& v : values) v = static_cast<float>(scale * (2.0 * random.uniform() - 1.0));
  return values;
}

inline Tensor upload(Backend& backend, const Shape& shape, const std::vector<float>& values) {
  Tensor tensor = backend.allocate(shape);
  backend.copy_from_host(values.data(), tensor);
  return tensor;
}

/// A parameter-style tensor (flat layout, PyTorch order), e.g. convolution weights.
inline Tensor upload_flat(Backend& backend, const Shape& shape, const std::vector<float>& values) {
  Tensor tensor = backend.allocate_flat(shape.elements()).reshaped(shape);
  backend.copy_from_host(values.data(), tensor);
  return tensor;
}

inline Tensor allocate_flat(Backend& backend, const Shape& shape) {
  return backend.allocate_flat(shape.elements()).reshaped(shape);
}

inline std::vector<float> download(Backend& backend, const Tensor& tensor) {
  std::vector<float> values(static_cast<std::size_t>(tensor.elements()));
  backend.copy_to_host(tensor, values.data());
  return values;
}

/// A convolution or a transposed convolution, for running it in every direction.
struct Convolution {
  bool transposed = false;
  Shape x;
  Shape w;  // (K, C/groups, R, S); transposed: (C, K/groups, R, S)
  ConvGeometry geometry;
  bool bias = true;

  Shape y() const {
    return transposed ? conv_transpose2d_output_shape(x, w, geometry)
                      : conv2d_output_shape(x, w, geometry);
  }
  std::int64_t outputs() const { return transposed ? w[1] * geometry.groups : w[0]; }
};

/// The host values of a convolution's operands: input, weights, bias and output gradient.
struct ConvolutionOperands {
  std::vector<float> x, w, b, dy;
};

/// Random operands, each from its own seed (`seed` advances by four).
inline ConvolutionOperands random_operands(const Convolution& c, std::uint64_t& seed) {
  ConvolutionOperands v;
  v.x = random_values(c.x.elements(), ++seed);
  v.w = random_values(c.w.elements(), ++seed);
  v.b = random_values(c.outputs(), ++seed);
  v.dy = random_values(c.y().elements(), ++seed);
  return v;
}

/// How a convolution runs: its three separate ops (forward, backward data, backward weights), or a
/// layer's training step (conv*_forward_training, then conv*_backward with what it saved), with x
/// overwritten in between to show which copy the backward reads.
enum class ConvolutionRun { separate_ops, layer_step, layer_step_x_overwritten };

/// What a convolution computed: forward, backward data, backward weights and (with a bias) the
/// bias gradient, in that order; `saved` is whether the layer step's forward kept anything.
struct ConvolutionResults {
  std::vector<std::vector<float>> results;
  bool saved = false;
  static const char* name(std::size_t k) {
    static const char* names[] = {"forward", "backward data", "backward weights", "bias gradient"};
    return names[k];
  }
};

inline ConvolutionResults run_convolution(Backend& be, const Convolution& c,
                                          const ConvolutionOperands& v, ConvolutionRun how) {
  const Shape ys = c.y(), bs{c.outputs()};
  const ConvGeometry& g = c.geometry;
  Tensor tx = upload(be, c.x, v.x), tw = upload_flat(be, c.w, v.w), tdy = upload(be, ys, v.dy);
  Tensor tb = c.bias ? upload(be, bs, v.b) : Tensor();
  Tensor ty = be.allocate(ys), tdx = be.allocate(c.x), tdw = allocate_flat(be, c.w);
  Tensor tdb = c.bias ? be.allocate(bs) : Tensor();
  ConvolutionResults out;
  if (how == ConvolutionRun::separate_ops) {
    if (c.transposed) {
      be.conv_transpose2d_forward(tx, tw, tb, ty, g);
      be.conv_transpose2d_backward_data(tdy, tw, tdx, g);
      be.conv_transpose2d_backward_weights(tx, tdy, tdw, tdb, g);
    } else {
      be.conv2d_forward(tx, tw, tb, ty, g);
      be.conv2d_backward_data(tdy, tw, tdx, g);
      be.conv2d_backward_weights(tx, tdy, tdw, tdb, g);
    }
  } else {
    std::unique_ptr<SavedInput> saved;
    if (c.transposed) {
      be.conv_transpose2d_forward_training(tx, tw, tb, ty, g, saved);
    } else {
      be.conv2d_forward_training(tx, tw, tb, ty, g, saved);
    }
    out.saved = saved != nullptr;
    if (how == ConvolutionRun::layer_step_x_overwritten) be.fill(tx, 1000.0F);
    if (c.transposed) {
      be.conv_transpose2d_backward(tx, tdy, tw, &tdx, tdw, tdb, g, saved.get());
    } else {
      be.conv2d_backward(tx, tdy, tw, &tdx, tdw, tdb, g, saved.get());
    }
  }
  out.results = {download(be, ty), download(be, tdx), download(be, tdw)};
  if (c.bias) out.results.push_back(download(be, tdb));
  return out;
}

/// Every |actual - expected| <= absolute + relative * |expected|; reports the worst element.
inline ::testing::AssertionResult close(const std::vector<float>& actual,
                                        const std::vector<float>& expected, double relative = 1e-4,
                                        double absolute = 1e-5) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure()
           << "sizes differ: " << actual.size() << " vs " << expected.size();
  }
  double worst = 0.0;
  std::size_t worst_index = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double allowed = absolute + relative * std::abs(double{expected[i]});
    const double excess = std::abs(double{actual[i]} - double{expected[i]}) / allowed;
    if (!(excess <= worst) || std::isnan(actual[i])) {
      worst = std::isnan(actual[i]) ? 1e300 : excess;
      worst_index = i;
    }
  }
  if (worst <= 1.0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "element " << worst_index << " is " << actual[worst_index] << ", expected "
         << expected[worst_index] << " (" << worst << " times the tolerance)";
}

/// The largest |value| (for scale-aware tolerances).
/// sqrt(sum (a - b)^2) / sqrt(sum b^2): how far `actual` is from `expected`, relative to its size.
inline double relative_l2_error(const std::vector<float>& actual,
                                const std::vector<float>& expected) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double d = double{actual[i]} - double{expected[i]};
    difference += d * d;
    norm += double{expected[i]} * double{expected[i]};
  }
  return std::sqrt(difference / std::max(norm, 1e-30));
}

inline double max_abs(const std::vector<float>& values) {
  double m = 0.0;
  for (float v : values) m = std::max(m, std::abs(double{v}));
  return m;
}

/// The compiled backends other than the reference (the suites compare them with it).
inline std::vector<std::string> backends_under_test() {
  std::vector<std::string> names;
  for (const auto& name : devices::compiled_backends()) {
    if (name != "ref") names.push_back(name);
  }
  return names;
}

inline std::string backend_test_name(const ::testing::TestParamInfo<std::string>& parameter) {
  return parameter.param;
}

}  // namespace labpose::nets::testing

/// Skips the current test when `device` cannot run on this machine (the cuda instantiation of a
/// suite on a machine without a usable GPU), saying why; any other failure still fails.
#define LABPOSE_SKIP_UNLESS_USABLE(device)                                            \
  do {                                                                                \
    const std::string why_unusable = ::labpose::devices::device_problem(device);      \
    if (!why_unusable.empty())                                                        \
      GTEST_SKIP() << (device) << " is not usable on this machine: " << why_unusable; \
  } while (false)

namespace labpose::nets::testing {

/// A suite run on every backend under test and compared with the reference backend `ref_`.
class BackendTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    LABPOSE_SKIP_UNLESS_USABLE(GetParam());
    backend_ = devices::make_backend(GetParam());
  }
  ref::RefBackend ref_;
  std::unique_ptr<Backend> backend_;
};

}  // namespace labpose::nets::testing
