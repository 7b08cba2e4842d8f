// Helpers for the network-library tests: random tensors, host round trips, tolerant comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
