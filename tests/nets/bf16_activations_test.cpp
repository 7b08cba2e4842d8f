// A net training in bf16 keeps the values and gradients between its layers in bf16
// (Backend::allocate_activation), on the CPU and on a GPU: each op that reads or writes them
// against the reference on the same bf16 values (exact where bf16 in gives bf16 out exactly, within
// rounding elsewhere), and whole networks' training steps against the same backend in fp32. Every
// test skips, saying why, on a CPU without bf16 units, and the cuda instantiations (label gpu)
// without a GPU of compute capability 8.0 or later.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "devices/devices.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/cpu/elements.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/nets/pose_net_cases.hpp"

namespace labpose::nets {
namespace {
using testing::copy_parameters;
using testing::download;
using testing::random_values;
using testing::relative_l2_error;
using testing::upload;

std::vector<float> rounded_to_bf16(std::vector<float> values) {
  for (float& v : values) v = cpu::bf16_value(cpu::bf16_bits(v));
  return values;
}

// A bf16 activation of `backend` holding `values` (already bf16, so stored exactly).
Tensor upload_bf16(Backend& backend, const Shape& shape, const std::vector<float>& values) {
  Tensor tensor = backend.allocate_activation(shape);
  EXPECT_EQ(tensor.element(), Element::bf16);
  backend.copy_from_host(values.data(), tensor);
  return tensor;
}

// The backend under test in bf16 (b.bf16) and in fp32 (b.fp32), beside the reference.
class Bf16Activations : public ::testing::TestWithParam<std::string> {
 protected:
  struct Backends {
    ref::RefBackend ref;
    std::unique_ptr<Backend> bf16, fp32;
  };

  void SetUp() override {
    const std::string& device = GetParam();
    if (device == "cpu" && !cpu::cpu_has_bf16()) {
      GTEST_SKIP() << "this CPU has no bf16 units (oneDNN uses " << cpu::cpu_instructions()
                   << "): training in bf16 is refused here";
    }
    LABPOSE_SKIP_UNLESS_USABLE(device);
    try {
      b.bf16 = devices::make_backend(device, PlanPrecision::bf16);
    } catch (const Error& error) {
      GTEST_SKIP() << device << " does not train in bf16: " << error.what();
    }
    b.fp32 = devices::make_backend(device);
  }

  Backends b;
};

TEST_P(Bf16Activations, OnlyATrainingBackendInBf16MakesThem) {
  EXPECT_EQ(b.bf16->allocate_activation(Shape{1, 8, 4, 4}).element(), Element::bf16);
  EXPECT_EQ(b.bf16->allocate_activation(Shape{8}).element(), Element::f32) << "not an image";
  EXPECT_EQ(b.bf16->allocate(Shape{1, 8, 4, 4}).element(), Element::f32);
  EXPECT_EQ(b.bf16->training_precision(), PlanPrecision::bf16);
  EXPECT_EQ(b.fp32->allocate_activation(Shape{1, 8, 4, 4}).element(), Element::f32);
  const auto values = rounded_to_bf16(random_values(2 * 5 * 3 * 7, 3, 4.0));
  const Tensor t = upload_bf16(*b.bf16, Shape{2, 5, 3, 7}, values);
  EXPECT_EQ(download(*b.bf16, t), values) << "host copies convert both ways, NCHW <-> NHWC";
  Tensor wide = b.bf16->allocate(t.shape());
  b.bf16->copy(t, wide);
  EXPECT_EQ(download(*b.bf16, wide), values);
  Tensor filled = b.bf16->allocate_activation(t.shape());
  b.bf16->fill(filled, 1.5F);
  EXPECT_EQ(download(*b.bf16, filled), std::vector<float>(values.size(), 1.5F));
}

// ReLU, ReLU6, max pooling and their gradients select or pass bf16 values: exactly the reference's
// results on the same values. Additions round once.
TEST_P(Bf16Activations, ElementwiseOpsAndPoolingMatchTheReference) {
  const Shape shape{2, 24, 9, 11};
  const auto x = rounded_to_bf16(random_values(shape.elements(), 11, 8.0));
  const auto dy = rounded_to_bf16(random_values(shape.elements(), 12, 1.0));
  for (const float cap : {0.0F, 6.0F}) {
    SCOPED_TRACE(cap > 0 ? "ReLU6" : "ReLU");
    Tensor y_ref = b.ref.allocate(shape), dx_ref = b.ref.allocate(shape);
    b.ref.relu_forward(upload(b.ref, shape, x), y_ref, cap);
    b.ref.relu_backward(upload(b.ref, shape, dy), y_ref, dx_ref, cap);
    Tensor in_place = upload_bf16(*b.bf16, shape, x);
    b.bf16->relu_forward(in_place, in_place, cap);
    EXPECT_EQ(download(*b.bf16, in_place), download(b.ref, y_ref));
    Tensor dx = b.bf16->allocate_activation(shape);
    b.bf16->relu_backward(upload_bf16(*b.bf16, shape, dy), in_place, dx, cap);
    EXPECT_EQ(download(*b.bf16, dx), download(b.ref, dx_ref));
  }
  {
    SCOPED_TRACE("add");
    Tensor sum = b.bf16->allocate_activation(shape), sum_ref = b.ref.allocate(shape);
    b.bf16->add(upload_bf16(*b.bf16, shape, x), upload_bf16(*b.bf16, shape, dy), sum);
    b.ref.add(upload(b.ref, shape, x), upload(b.ref, shape, dy), sum_ref);
    EXPECT_EQ(download(*b.bf16, sum), rounded_to_bf16(download(b.ref, sum_ref)));
  }
  {
    SCOPED_TRACE("max pool 3x3 stride 2");
    const PoolGeometry g{3, 3, 2, 2, 1, 1, 1, 1};
    const Shape out = max_pool_output_shape(shape, g);
    const auto dout = rounded_to_bf16(random_values(out.elements(), 13, 1.0));
    Tensor y = b.bf16->allocate_activation(out), y_ref = b.ref.allocate(out);
    b.bf16->max_pool_forward(upload_bf16(*b.bf16, shape, x), y, g);
    b.ref.max_pool_forward(upload(b.ref, shape, x), y_ref, g);
    EXPECT_EQ(download(*b.bf16, y), download(b.ref, y_ref));
    Tensor dx = b.bf16->allocate_activation(shape), dx_ref = b.ref.allocate(shape);
    b.bf16->max_pool_backward(upload_bf16(*b.bf16, out, dout), upload_bf16(*b.bf16, shape, x), dx,
                              g);
    b.ref.max_pool_backward(upload(b.ref, out, dout), upload(b.ref, shape, x), dx_ref, g);
    EXPECT_LT(relative_l2_error(download(*b.bf16, dx), download(b.ref, dx_ref)), 4e-3);
  }
}

// Batch norm on bf16 values (labpose's own loops), forward and backward with batch statistics and
// with running ones, and the pieces of its synchronized form, with 32 channels and 24: within
// bf16's rounding of the reference on the same values.
TEST_P(Bf16Activations, BatchNormMatchesTheReference) {
  for (const std::int64_t channels : {32, 24}) {
    SCOPED_TRACE(channels);
    const Shape shape{2, channels, 7, 9}, per_channel{channels};
    const auto x = rounded_to_bf16(random_values(shape.elements(), 21, 3.0));
    const auto dy = rounded_to_bf16(random_values(shape.elements(), 22, 1.0));
    const auto gamma = random_values(channels, 23, 1.0), beta = random_values(channels, 24, 1.0);
    struct Run {
      std::vector<float> y, dx, dgamma, dbeta, mean, inference, frozen_dx, frozen_dgamma;
    };
    const auto run = [&](Backend& be, bool half) {
      const auto make = [&](const std::vector<float>& v) {
        return half ? upload_bf16(be, shape, v) : upload(be, shape, v);
      };
      Tensor xt = make(x), dyt = make(dy);
      Tensor y = half ? be.allocate_activation(shape) : be.allocate(shape);
      Tensor dx = half ? be.allocate_activation(shape) : be.allocate(shape);
      Tensor g = upload(be, per_channel, gamma), bt = upload(be, per_channel, beta);
      Tensor mean = be.allocate(per_channel), variance = be.allocate(per_channel);
      Tensor running_mean =
          upload(be, per_channel, std::vector<float>(static_cast<std::size_t>(channels), 0.0F));
      Tensor running_var =
          upload(be, per_channel, std::vector<float>(static_cast<std::size_t>(channels), 1.0F));
      Tensor dgamma = be.allocate(per_channel), dbeta = be.allocate(per_channel);
      be.batch_norm_forward_training(xt, g, bt, 1e-5F, 0.1F, y, mean, variance, running_mean,
                                     running_var);
      be.batch_norm_backward(dyt, xt, g, mean, variance, 1e-5F, false, dx, dgamma, dbeta);
      Run out;
      out.y = download(be, y);
      out.dx = download(be, dx);
      out.dgamma = download(be, dgamma);
      out.dbeta = download(be, dbeta);
      out.mean = download(be, mean);
      // With the running statistics: inference, and the backward of frozen batch norm.
      be.batch_norm_forward_inference(xt, g, bt, running_mean, running_var, 1e-5F, y);
      out.inference = download(be, y);
      be.batch_norm_backward(dyt, xt, g, running_mean, running_var, 1e-5F, true, dx, dgamma, dbeta);
      out.frozen_dx = download(be, dx);
      out.frozen_dgamma = download(be, dgamma);
      return out;
    };
    const Run want = run(b.ref, false), got = run(*b.bf16, true);
    EXPECT_LT(relative_l2_error(got.y, want.y), 4e-3);
    EXPECT_LT(relative_l2_error(got.dx, want.dx), 8e-3);
    EXPECT_LT(relative_l2_error(got.dgamma, want.dgamma), 1e-3);
    EXPECT_LT(relative_l2_error(got.dbeta, want.dbeta), 1e-3);
    EXPECT_LT(relative_l2_error(got.mean, want.mean), 1e-4);
    EXPECT_LT(relative_l2_error(got.inference, want.inference), 4e-3);
    EXPECT_LT(relative_l2_error(got.frozen_dx, want.frozen_dx), 4e-3);
    EXPECT_LT(relative_l2_error(got.frozen_dgamma, want.frozen_dgamma), 1e-3);
    // The synchronized pieces (statistics, gradient sums, the data gradient from the totals).
    Tensor mean = b.bf16->allocate(per_channel), variance = b.bf16->allocate(per_channel);
    const Tensor xt = upload_bf16(*b.bf16, shape, x), dyt = upload_bf16(*b.bf16, shape, dy);
    b.bf16->batch_norm_statistics(xt, mean, variance);
    EXPECT_LT(relative_l2_error(download(*b.bf16, mean), want.mean), 1e-5);
    Tensor sum_dy_xhat = b.bf16->allocate(per_channel), sum_dy = b.bf16->allocate(per_channel);
    b.bf16->batch_norm_backward_reduce(dyt, xt, mean, variance, 1e-5F, sum_dy_xhat, sum_dy);
    EXPECT_LT(relative_l2_error(download(*b.bf16, sum_dy_xhat), want.dgamma), 1e-4);
    EXPECT_LT(relative_l2_error(download(*b.bf16, sum_dy), want.dbeta), 1e-5);
    Tensor dx = b.bf16->allocate_activation(shape);
    b.bf16->batch_norm_backward_data(dyt, xt, upload(*b.bf16, per_channel, gamma), mean, variance,
                                     1e-5F, sum_dy_xhat, sum_dy, shape.n() * shape.h() * shape.w(),
                                     dx);
    EXPECT_LT(relative_l2_error(download(*b.bf16, dx), want.dx), 8e-3);
  }
}

// Statistics of values far from 0 (mean 1000, spread 8): the variance keeps its digits.
TEST_P(Bf16Activations, BatchStatisticsOfValuesFarFromZero) {
  const Shape shape{2, 16, 9, 9}, per_channel{16};
  auto x = random_values(shape.elements(), 41, 8.0);
  for (float& v : x) v += 1000.0F;
  x = rounded_to_bf16(x);
  const auto statistics = [&](Backend& be, const Tensor& t) {
    Tensor mean = be.allocate(per_channel), variance = be.allocate(per_channel);
    be.batch_norm_statistics(t, mean, variance);
    return std::make_pair(download(be, mean), download(be, variance));
  };
  const auto [mean, variance] = statistics(*b.bf16, upload_bf16(*b.bf16, shape, x));
  const auto [mean_ref, variance_ref] = statistics(b.ref, upload(b.ref, shape, x));
  EXPECT_LT(relative_l2_error(mean, mean_ref), 1e-6);
  EXPECT_LT(relative_l2_error(variance, variance_ref), 1e-4);
}

// The weight gradient of a 5x5 depthwise layer. On the CPU it is labpose's own fp32 loop: on bf16
// values it reads fp32 copies of each block of 16 channels (here one whole block and a partial
// one), so it computes the reference's sums on the same values up to their order. cuDNN's bf16
// convolutions sum in fp32 too but hand the gradient back in bf16 (as PyTorch's AMP has it): within
// bf16's rounding of it. The bias gradient is a sum in double on every backend.
TEST_P(Bf16Activations, DepthwiseWeightGradientOfBf16Values) {
  const Shape x_shape{2, 24, 11, 13}, w_shape{24, 1, 5, 5};
  const ConvGeometry g = ConvGeometry::symmetric(1, 2, 1, 24);
  const Shape y_shape = conv2d_output_shape(x_shape, w_shape, g);
  const auto x = rounded_to_bf16(random_values(x_shape.elements(), 31, 2.0));
  const auto dy = rounded_to_bf16(random_values(y_shape.elements(), 32, 1.0));
  const auto run = [&](Backend& be, bool half) {
    const Tensor xt = half ? upload_bf16(be, x_shape, x) : upload(be, x_shape, x);
    const Tensor dyt = half ? upload_bf16(be, y_shape, dy) : upload(be, y_shape, dy);
    Tensor dw = testing::allocate_flat(be, w_shape), dbias = be.allocate(Shape{24});
    be.conv2d_backward_weights(xt, dyt, dw, dbias, g);
    return std::make_pair(download(be, dw), download(be, dbias));
  };
  const auto [dw, dbias] = run(*b.bf16, true);
  const auto [dw_ref, dbias_ref] = run(b.ref, false);
  EXPECT_LT(relative_l2_error(dw, dw_ref), GetParam() == "cpu" ? 1e-5 : 4e-3);
  EXPECT_LT(relative_l2_error(dbias, dbias_ref), 1e-5);
}

// Whole networks: every value between layers is bf16 and the outputs fp32; a training step's
// outputs and gradients are those of fp32 within what bf16 values through ~50 layers allow
// (measured: outputs 0.9-1.9 %, gradients 0.6-2.5 % relative L2). Batch norm is frozen: with batch
// statistics (or statistics calibrated on this random input) these random deep networks amplify
// any rounding, and the old mixed precision (fp32 values between layers, bf16 convolutions) ended
// 20-55 % from fp32 as this does. Training with batch statistics: the demo recipe in
// tests/pipeline/training_test.cpp.
TEST_P(Bf16Activations, NetworksKeepBf16BetweenLayersAndTrainLikeFp32) {
  Backend& fp32 = *b.fp32;
  Backend& bf16 = *b.bf16;
  for (const char* architecture : {"mobilenet_v2_0.35", "efficientnet_lite0", "resnet_50"}) {
    SCOPED_TRACE(architecture);
    const PoseNetSpec spec{architecture, 3, true};
    auto expected = build_pose_net(fp32, spec);
    auto actual = build_pose_net(bf16, spec);
    const Shape input{2, 3, 64, 64};
    const auto image = random_values(input.elements(), 6, 127.0);
    initialize_pose_net(*expected, 5);
    copy_parameters(*expected, *actual);
    testing::freeze_batch_norm(*expected, true);
    testing::freeze_batch_norm(*actual, true);
    const auto shapes = expected->output_shapes(input);
    const auto r0 = random_values(shapes[0].elements(), 7),
               r1 = random_values(shapes[1].elements(), 8);
    for (Net* net : {expected.get(), actual.get()}) {
      Backend& be = net->backend();
      net->forward(upload(be, input, image), true);
      net->backward({upload(be, shapes[0], r0), upload(be, shapes[1], r1)});
    }
    int half = 0;
    for (int n = 0; n < static_cast<int>(actual->node_count()); ++n) {
      if (actual->value(n).element() == Element::bf16) ++half;
    }
    EXPECT_GT(half, static_cast<int>(actual->node_count()) / 2) << "values between layers in bf16";
    for (std::size_t k = 0; k < 2; ++k) {
      const Tensor& out = actual->value(actual->outputs()[k]);
      EXPECT_EQ(out.element(), Element::f32) << "outputs stay fp32";
      EXPECT_LT(relative_l2_error(download(bf16, out),
                                  download(fp32, expected->value(expected->outputs()[k]))),
                4e-2)
          << expected->output_names()[k];
    }
    EXPECT_LT(relative_l2_error(download(bf16, actual->trainable_gradients()),
                                download(fp32, expected->trainable_gradients())),
              5e-2);
  }
}

// The CPU, and the GPU where this build has one (its instantiation carries the label gpu).
INSTANTIATE_TEST_SUITE_P(Backends, Bf16Activations,
                         ::testing::ValuesIn(testing::backends_under_test()),
                         testing::backend_test_name);

}  // namespace
}  // namespace labpose::nets
