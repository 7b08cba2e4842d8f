// Finite-difference checks of the reference backend's backward ops and of the Net's backward
// plumbing (residual accumulation, in-place ReLU, gradient buffer reuse): the analytic gradient of
// L = sum(output * r) must match (L(x + e) - L(x - e)) / 2e element by element.
#include <gtest/gtest.h>

#include <functional>

#include "nets/layer.hpp"
#include "nets/net.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::nets {
namespace {
using testing::download;
using testing::random_values;
using testing::upload;
using testing::upload_flat;

constexpr double kStep = 1e-3;

// Checks d/dv of `loss` at up to 24 elements of `values` (modified in place and restored) against
// `analytic`. `loss` recomputes everything from `values`.
void expect_gradient(const char* what, std::vector<float>& values,
                     const std::vector<float>& analytic, const std::function<double()>& loss,
                     const std::function<bool(float)>& skip = {}) {
  ASSERT_EQ(values.size(), analytic.size()) << what;
  Random random(values.size());
  const std::size_t checks = std::min<std::size_t>(24, values.size());
  for (std::size_t k = 0; k < checks; ++k) {
    const std::size_t i =
        checks == values.size() ? k : static_cast<std::size_t>(random.next() % values.size());
    if (skip && skip(values[i])) continue;
    const float original = values[i];
    values[i] = static_cast<float>(original + kStep);
    const double plus = loss();
    values[i] = static_cast<float>(original - kStep);
    const double minus = loss();
    values[i] = original;
    const double numeric = (plus - minus) / (2 * kStep);
    EXPECT_NEAR(analytic[i], numeric, 2e-3 + 2e-3 * std::abs(numeric)) << what << " element " << i;
  }
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += double{a[i]} * double{b[i]};
  return sum;
}

class Gradients : public ::testing::Test {
 protected:
  ref::RefBackend be_;
};

TEST_F(Gradients, Conv2d) {
  const Shape xs{2, 4, 5, 6}, ws{6, 2, 3, 3};
  ConvGeometry g = ConvGeometry::symmetric(2, 1, 1, 2);
  g.pad_bottom = 2;
  const Shape ys = conv2d_output_shape(xs, ws, g);
  auto x = random_values(xs.elements(), 1), w = random_values(ws.elements(), 2),
       b = random_values(6, 3);
  const auto r = random_values(ys.elements(), 4);
  const auto loss = [&] {
    Tensor y = be_.allocate(ys);
    be_.conv2d_forward(upload(be_, xs, x), upload_flat(be_, ws, w), upload_flat(be_, Shape{6}, b),
                       y, g);
    return dot(download(be_, y), r);
  };
  Tensor dx = be_.allocate(xs), dw = be_.allocate_flat(ws.elements()).reshaped(ws),
         db = be_.allocate_flat(6);
  const Tensor dy = upload(be_, ys, r);
  be_.conv2d_backward_data(dy, upload_flat(be_, ws, w), dx, g);
  be_.conv2d_backward_weights(upload(be_, xs, x), dy, dw, db, g);
  expect_gradient("dx", x, download(be_, dx), loss);
  expect_gradient("dw", w, download(be_, dw), loss);
  expect_gradient("dbias", b, download(be_, db), loss);
}

TEST_F(Gradients, ConvTranspose2d) {
  const Shape xs{2, 4, 3, 4}, ws{4, 3, 3, 3};
  ConvGeometry g = ConvGeometry::symmetric(2, 1);
  g.output_pad_h = g.output_pad_w = 1;
  const Shape ys = conv_transpose2d_output_shape(xs, ws, g);
  auto x = random_values(xs.elements(), 5), w = random_values(ws.elements(), 6),
       b = random_values(3, 7);
  const auto r = random_values(ys.elements(), 8);
  const auto loss = [&] {
    Tensor y = be_.allocate(ys);
    be_.conv_transpose2d_forward(upload(be_, xs, x), upload_flat(be_, ws, w),
                                 upload_flat(be_, Shape{3}, b), y, g);
    return dot(download(be_, y), r);
  };
  Tensor dx = be_.allocate(xs), dw = be_.allocate_flat(ws.elements()).reshaped(ws),
         db = be_.allocate_flat(3);
  const Tensor dy = upload(be_, ys, r);
  be_.conv_transpose2d_backward_data(dy, upload_flat(be_, ws, w), dx, g);
  be_.conv_transpose2d_backward_weights(upload(be_, xs, x), dy, dw, db, g);
  expect_gradient("dx", x, download(be_, dx), loss);
  expect_gradient("dw", w, download(be_, dw), loss);
  expect_gradient("dbias", b, download(be_, db), loss);
}

TEST_F(Gradients, BatchNormWithBatchStatisticsAndWithConstantStatistics) {
  const Shape xs{3, 4, 2, 3}, cs{4};
  auto x = random_values(xs.elements(), 9, 2.0), gamma = random_values(4, 10),
       beta = random_values(4, 11);
  const auto r = random_values(xs.elements(), 12);
  auto mean = random_values(4, 13), variance = random_values(4, 14);
  for (float& v : variance) v = 0.5F + std::abs(v);
  for (const bool constant : {false, true}) {
    const auto loss = [&] {
      Tensor y = be_.allocate(xs), sm = be_.allocate(cs), sv = be_.allocate(cs);
      Tensor rm = upload_flat(be_, cs, mean), rv = upload_flat(be_, cs, variance);
      if (constant) {
        be_.batch_norm_forward_inference(upload(be_, xs, x), upload_flat(be_, cs, gamma),
                                         upload_flat(be_, cs, beta), rm, rv, 1e-5F, y);
      } else {
        be_.batch_norm_forward_training(upload(be_, xs, x), upload_flat(be_, cs, gamma),
                                        upload_flat(be_, cs, beta), 1e-5F, 0.1F, y, sm, sv, rm, rv);
      }
      return dot(download(be_, y), r);
    };
    Tensor y = be_.allocate(xs), sm = be_.allocate(cs), sv = be_.allocate(cs);
    Tensor rm = upload_flat(be_, cs, mean), rv = upload_flat(be_, cs, variance);
    be_.batch_norm_forward_training(upload(be_, xs, x), upload_flat(be_, cs, gamma),
                                    upload_flat(be_, cs, beta), 1e-5F, 0.1F, y, sm, sv, rm, rv);
    Tensor dx = be_.allocate(xs), dg = be_.allocate(cs), db = be_.allocate(cs);
    be_.batch_norm_backward(upload(be_, xs, r), upload(be_, xs, x), upload_flat(be_, cs, gamma),
                            constant ? upload_flat(be_, cs, mean) : sm,
                            constant ? upload_flat(be_, cs, variance) : sv, 1e-5F, constant, dx, dg,
                            db);
    SCOPED_TRACE(constant ? "constant statistics" : "batch statistics");
    expect_gradient("dx", x, download(be_, dx), loss);
    expect_gradient("dgamma", gamma, download(be_, dg), loss);
    expect_gradient("dbeta", beta, download(be_, db), loss);
  }
}

TEST_F(Gradients, ReluRelu6AndMaxPool) {
  const Shape xs{2, 3, 5, 5};
  auto x = random_values(xs.elements(), 15, 8.0);
  const auto r = random_values(xs.elements(), 16);
  for (const float cap : {0.0F, 6.0F}) {
    const auto loss = [&] {
      Tensor y = be_.allocate(xs);
      be_.relu_forward(upload(be_, xs, x), y, cap);
      return dot(download(be_, y), r);
    };
    Tensor y = be_.allocate(xs), dx = be_.allocate(xs);
    be_.relu_forward(upload(be_, xs, x), y, cap);
    be_.relu_backward(upload(be_, xs, r), y, dx, cap);
    const auto near_kink = [cap](float v) {
      return std::abs(v) < 0.01F || std::abs(v - cap) < 0.01F;
    };
    expect_gradient(cap > 0 ? "relu6" : "relu", x, download(be_, dx), loss, near_kink);
  }
  const PoolGeometry g;
  const Shape ys = max_pool_output_shape(xs, g);
  const auto rp = random_values(ys.elements(), 17);
  const auto loss = [&] {
    Tensor y = be_.allocate(ys);
    be_.max_pool_forward(upload(be_, xs, x), y, g);
    return dot(download(be_, y), rp);
  };
  Tensor dx = be_.allocate(xs);
  be_.max_pool_backward(upload(be_, ys, rp), upload(be_, xs, x), dx, g);
  expect_gradient("max pool", x, download(be_, dx), loss);
}

TEST_F(Gradients, Losses) {
  const Shape s{2, 3, 4, 4};
  auto logits = random_values(s.elements(), 18, 4.0),
       predictions = random_values(s.elements(), 19, 3.0);
  auto targets = random_values(s.elements(), 20), weights = random_values(s.elements(), 21);
  for (float& w : weights) w = std::abs(w);
  const auto sce = [&] {
    return be_.sigmoid_cross_entropy_forward(upload(be_, s, logits), upload(be_, s, targets),
                                             upload(be_, s, weights));
  };
  const auto huber = [&] {
    return be_.huber_forward(upload(be_, s, predictions), upload(be_, s, targets),
                             upload(be_, s, weights), 1.0F);
  };
  Tensor d1 = be_.allocate(s), d2 = be_.allocate(s);
  be_.sigmoid_cross_entropy_backward(upload(be_, s, logits), upload(be_, s, targets),
                                     upload(be_, s, weights), 1.0F, d1);
  be_.huber_backward(upload(be_, s, predictions), upload(be_, s, targets), upload(be_, s, weights),
                     1.0F, 1.0F, d2);
  expect_gradient("sigmoid cross-entropy", logits, download(be_, d1), sce);
  expect_gradient("huber", predictions, download(be_, d2), huber);
}

// A small network with every layer kind, a residual add whose input also feeds a convolution
// (gradient accumulation), in-place ReLUs and two outputs.
std::unique_ptr<Net> small_net(Backend& backend) {
  auto net = std::make_unique<Net>(backend);
  int x = net->add(std::make_unique<Normalize>("normalize", std::vector<float>{10, 20, 30},
                                               std::vector<float>{2, 4, 8}),
                   {Net::kInput});
  x = net->add(std::make_unique<Conv2d>("conv1", 3, 8, 3, ConvGeometry::symmetric(2, 1), false),
               {x});
  x = net->add(std::make_unique<BatchNorm2d>("bn1", 8), {x});
  x = net->add(std::make_unique<Relu>("relu1"), {x});
  x = net->add(std::make_unique<MaxPool2d>("pool", PoolGeometry{}), {x});
  int branch = net->add(
      std::make_unique<Conv2d>("conv2", 8, 8, 3, ConvGeometry::symmetric(1, 2, 2, 2), true), {x});
  branch = net->add(std::make_unique<BatchNorm2d>("bn2", 8), {branch});
  branch = net->add(std::make_unique<Relu>("relu2", 6.0F), {branch});
  const int sum = net->add(std::make_unique<Add>("add"), {branch, x});
  const int features = net->add(std::make_unique<Relu>("relu3"), {sum});
  ConvGeometry head = ConvGeometry::symmetric(2, 1);
  head.output_pad_h = head.output_pad_w = 1;
  const int a =
      net->add(std::make_unique<ConvTranspose2d>("head.a", 8, 2, 3, head, true), {features});
  const int b =
      net->add(std::make_unique<ConvTranspose2d>("head.b", 8, 4, 3, head, true), {features});
  net->set_outputs({a, b}, {"a", "b"});
  net->finalize();
  return net;
}

TEST_F(Gradients, NetBackwardMatchesFiniteDifferences) {
  auto net = small_net(be_);
  std::vector<float> trainable = random_values(net->trainable_count(), 22, 0.5);
  be_.copy_from_host(trainable.data(), net->trainable_values());
  const Shape input{2, 3, 12, 10};
  const auto image = random_values(input.elements(), 23, 100.0);
  const Tensor x = upload(be_, input, image);
  const auto shapes = net->output_shapes(input);
  const auto ra = random_values(shapes[0].elements(), 24),
             rb = random_values(shapes[1].elements(), 25);
  // Batch-norm running statistics change with every training forward but do not enter the loss.
  const auto loss = [&] {
    be_.copy_from_host(trainable.data(), net->trainable_values());
    const auto& outputs = net->forward(x, true);
    return dot(download(be_, outputs[0]), ra) + dot(download(be_, outputs[1]), rb);
  };
  loss();
  net->backward({upload(be_, shapes[0], ra), upload(be_, shapes[1], rb)});
  const auto analytic = download(be_, net->trainable_gradients());
  expect_gradient("parameters", trainable, analytic, loss);
  // Every parameter tensor gets a check of its own (the random picks above may miss some).
  for (const auto& parameter : net->parameters()) {
    if (!parameter->trainable) continue;
    SCOPED_TRACE(parameter->name);
    const std::size_t offset = parameter->value.offset() - net->trainable_values().offset();
    const std::size_t i = offset + static_cast<std::size_t>(parameter->shape.elements()) / 2;
    const float original = trainable[i];
    trainable[i] = static_cast<float>(original + kStep);
    const double plus = loss();
    trainable[i] = static_cast<float>(original - kStep);
    const double minus = loss();
    trainable[i] = original;
    const double numeric = (plus - minus) / (2 * kStep);
    EXPECT_NEAR(analytic[i], numeric, 2e-3 + 2e-3 * std::abs(numeric));
  }
}

}  // namespace
}  // namespace labpose::nets
