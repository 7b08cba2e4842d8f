// The backend conformance suite: every op of every compiled backend against the reference backend,
// forward and both backward directions, on odd shapes (batch 1 and >1, groups, depthwise, dilation,
// strides, asymmetric padding), and a compiled inference plan; one test fails when a Backend method
// has no case here. The CUDA backend joins through devices::compiled_backends().
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <regex>
#include <string>

#include "devices/devices.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
using testing::allocate_flat;
using testing::close;
using testing::download;
using testing::max_abs;
using testing::random_values;
using testing::upload;
using testing::upload_flat;

struct ConvCase {
  const char* name;
  Shape x;
  Shape w;  // (K, C/groups, R, S)
  ConvGeometry geometry;
  bool bias;
};

ConvGeometry geometry(int stride, int pad, int dilation, int groups) {
  return ConvGeometry::symmetric(stride, pad, dilation, groups);
}

ConvGeometry asymmetric() {
  ConvGeometry g = ConvGeometry::symmetric(2, 0);
  g.pad_top = 1;
  g.pad_left = 0;
  g.pad_bottom = 2;
  g.pad_right = 1;
  return g;
}

// EfficientNet-Lite's stride-2 "same" padding: (k-2)/2 before, the rest of k-1 after (the last row
// unused on even sizes).
ConvGeometry tensorflow_same_stride_2(int kernel, int groups) {
  ConvGeometry g = ConvGeometry::symmetric(2, (kernel - 2) / 2, 1, groups);
  g.pad_bottom = g.pad_right = kernel - 1 - g.pad_top;
  return g;
}

// 5x5, dilation 2, padded 4 above, 3 left, 5 below and 5 right (a 10x8 output from 9x8).
ConvGeometry depthwise_dilated_uneven(int channels) {
  ConvGeometry g = ConvGeometry::symmetric(1, 4, 2, channels);
  g.pad_left = 3;
  g.pad_bottom = 5;
  g.pad_right = 5;
  return g;
}

std::vector<ConvCase> conv_cases() {
  return {
      {"3x3 batch 1", Shape{1, 3, 7, 9}, Shape{5, 3, 3, 3}, geometry(1, 1, 1, 1), true},
      {"3x3 stride 2 asymmetric padding batch 2", Shape{2, 4, 8, 7}, Shape{6, 4, 3, 3},
       asymmetric(), false},
      {"grouped dilated", Shape{3, 6, 9, 8}, Shape{6, 2, 3, 3}, geometry(1, 2, 2, 3), true},
      {"depthwise stride 2", Shape{2, 8, 9, 9}, Shape{8, 1, 3, 3}, geometry(2, 1, 1, 8), false},
      {"5x5 depthwise stride 2 TensorFlow same padding, even and odd", Shape{2, 8, 10, 9},
       Shape{8, 1, 5, 5}, tensorflow_same_stride_2(5, 8), false},
      {"3x3 stride 2 TensorFlow same padding, odd and even", Shape{1, 3, 11, 12}, Shape{8, 3, 3, 3},
       tensorflow_same_stride_2(3, 1), false},
      {"depthwise dilated", Shape{1, 16, 6, 7}, Shape{16, 1, 3, 3}, geometry(1, 2, 2, 16), false},
      // The CPU backend's own gradients of depthwise convolutions (dilated, or not 3x3): channels
      // beyond a multiple of 16, uneven padding, strides, maps smaller than the filter's reach.
      {"5x5 depthwise dilated, 20 channels, uneven padding", Shape{2, 20, 9, 8}, Shape{20, 1, 5, 5},
       depthwise_dilated_uneven(20), true},
      {"3x3 depthwise dilated stride 2", Shape{2, 24, 11, 10}, Shape{24, 1, 3, 3},
       geometry(2, 2, 2, 24), true},
      {"5x5 depthwise dilated on a 3x4 map", Shape{1, 48, 3, 4}, Shape{48, 1, 5, 5},
       geometry(1, 4, 2, 48), false},
      {"5x5 depthwise dilated stride 2 on a 3x4 map", Shape{2, 16, 3, 4}, Shape{16, 1, 5, 5},
       geometry(2, 4, 2, 16), true},
      {"5x5 depthwise, 36 channels", Shape{2, 36, 12, 11}, Shape{36, 1, 5, 5},
       geometry(1, 2, 1, 36), true},
      {"mobilenet_v2_0.35's last depthwise: 336 channels, dilation 2", Shape{4, 336, 8, 8},
       Shape{336, 1, 3, 3}, geometry(1, 2, 2, 336), false},
      {"1x1 stride 2", Shape{2, 16, 7, 7}, Shape{32, 16, 1, 1}, geometry(2, 0, 1, 1), false},
      {"7x7 stem", Shape{2, 3, 17, 15}, Shape{8, 3, 7, 7}, geometry(2, 3, 1, 1), false},
      {"7x7 stem, 64 filters", Shape{2, 3, 48, 40}, Shape{64, 3, 7, 7}, geometry(2, 3, 1, 1),
       false},
      {"wide 3x3", Shape{1, 32, 5, 6}, Shape{48, 32, 3, 3}, geometry(1, 1, 1, 1), true},
      {"dilated on a tiny map", Shape{2, 64, 3, 3}, Shape{64, 64, 3, 3}, geometry(1, 2, 2, 1),
       false},
      {"dilated, map smaller than the kernel", Shape{1, 32, 2, 3}, Shape{32, 32, 3, 3},
       geometry(1, 2, 2, 1), false},
      {"dilated, 512 channels on a 3x3 map", Shape{2, 512, 3, 3}, Shape{512, 512, 3, 3},
       geometry(1, 2, 2, 1), false},
  };
}

struct TransposeCase {
  const char* name;
  Shape x;
  Shape w;  // (C, K/groups, R, S)
  ConvGeometry geometry;
  bool bias;
};

std::vector<TransposeCase> transpose_cases() {
  ConvGeometry head = ConvGeometry::symmetric(2, 1);
  head.output_pad_h = head.output_pad_w = 1;
  ConvGeometry grouped = ConvGeometry::symmetric(2, 1, 1, 2);
  ConvGeometry dilated = ConvGeometry::symmetric(1, 2, 2);
  return {
      {"pose head", Shape{2, 12, 5, 7}, Shape{12, 4, 3, 3}, head, true},
      {"pose head on 2048 channels, 3 outputs", Shape{2, 2048, 3, 3}, Shape{2048, 3, 3, 3}, head,
       true},
      {"pose head on 2048 channels, 6 outputs", Shape{2, 2048, 6, 5}, Shape{2048, 6, 3, 3}, head,
       true},
      {"stride 1 no padding", Shape{1, 5, 4, 3}, Shape{5, 3, 3, 3}, ConvGeometry{}, false},
      {"grouped", Shape{1, 8, 4, 5}, Shape{8, 3, 3, 3}, grouped, true},
      {"dilated", Shape{2, 4, 5, 5}, Shape{4, 6, 3, 3}, dilated, false},
  };
}

// Each test runs an op on `backend_` and on `ref_` with the same host inputs and compares.
class Conformance : public testing::BackendTest {};

TEST_P(Conformance, HostRoundTripAndFill) {
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{7}, Shape{3, 4}}) {
    const auto values = random_values(shape.elements(), 1);
    Tensor t = upload(*backend_, shape, values);
    EXPECT_EQ(download(*backend_, t), values) << shape.text();
    Tensor copy = backend_->allocate(shape);
    backend_->copy(t, copy);
    EXPECT_EQ(download(*backend_, copy), values);
    backend_->fill(copy, 2.5F);
    EXPECT_EQ(download(*backend_, copy), std::vector<float>(values.size(), 2.5F));
  }
}

// The values between a net's layers: fp32 on a backend training in fp32 (every backend of this
// suite), so the same round trip is exact; bf16 ones are Bf16Activations' (bf16_activations_test).
TEST_P(Conformance, ActivationsOfAnFp32BackendAreFp32) {
  const Shape shape{2, 3, 4, 5};
  const auto values = random_values(shape.elements(), 2);
  Tensor t = backend_->allocate_activation(shape);
  EXPECT_EQ(t.shape(), shape);
  EXPECT_EQ(t.layout(), backend_->activation_layout());
  EXPECT_EQ(t.element(), Element::f32);
  backend_->copy_from_host(values.data(), t);
  EXPECT_EQ(download(*backend_, t), values);
}

// A training step's upload: several tensors of different layouts in one call, twice over (the
// second through the other staging buffer on a GPU), each ending up as its own host values.
TEST_P(Conformance, SeveralTensorsFromHostAtOnce) {
  const std::vector<Shape> shapes = {Shape{2, 3, 4, 5}, Shape{11}, Shape{1, 2, 3, 3}};
  for (const std::uint64_t seed : {std::uint64_t{3}, std::uint64_t{4}}) {
    std::vector<std::vector<float>> values;
    std::vector<Tensor> tensors;
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      values.push_back(random_values(shapes[k].elements(), seed * 10 + k));
      tensors.push_back(shapes[k].rank() == 4 ? backend_->allocate(shapes[k])
                                              : backend_->allocate_flat(shapes[k].elements()));
    }
    std::vector<nets::Backend::HostCopy> copies;
    for (std::size_t k = 0; k < shapes.size(); ++k)
      copies.push_back({values[k].data(), &tensors[k]});
    backend_->copy_all_from_host(copies);
    for (std::size_t k = 0; k < shapes.size(); ++k)
      EXPECT_EQ(download(*backend_, tensors[k]), values[k]) << shapes[k].text() << " seed " << seed;
  }
}

TEST_P(Conformance, InterleavedPixelsFromHost) {
  for (const Shape& shape : {Shape{2, 3, 4, 5}, Shape{1, 1, 3, 2}, Shape{3, 4, 2, 7}}) {
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(shape.elements()));
    for (std::size_t i = 0; i < pixels.size(); ++i)
      pixels[i] = static_cast<std::uint8_t>((i * 97 + 13) % 256);
    pixels.front() = 0;
    pixels.back() = 255;
    Tensor t = backend_->allocate(shape);
    backend_->copy_pixels_from_host(pixels.data(), t);
    const std::vector<float> values = download(*backend_, t);
    // Logical (n, c, y, x) is byte ((n * H + y) * W + x) * C + c.
    const std::int64_t C = shape.c(), H = shape.h(), W = shape.w();
    for (std::int64_t n = 0; n < shape.n(); ++n) {
      for (std::int64_t c = 0; c < C; ++c) {
        for (std::int64_t y = 0; y < H; ++y) {
          for (std::int64_t x = 0; x < W; ++x) {
            const auto logical = static_cast<std::size_t>(((n * C + c) * H + y) * W + x);
            const auto byte = static_cast<std::size_t>(((n * H + y) * W + x) * C + c);
            ASSERT_EQ(values[logical], static_cast<float>(pixels[byte])) << shape.text();
          }
        }
      }
    }
    Tensor expected = ref_.allocate(shape);
    ref_.copy_pixels_from_host(pixels.data(), expected);
    EXPECT_EQ(values, download(ref_, expected)) << shape.text();
  }
}

// The backend's separate ops and a layer's training step against ref's separate ops.
void expect_all_directions_as_ref(Backend& ref, Backend& backend, const testing::Convolution& c,
                                  std::uint64_t& seed) {
  using testing::ConvolutionRun;
  const testing::ConvolutionOperands v = testing::random_operands(c, seed);
  const auto expected = run_convolution(ref, c, v, ConvolutionRun::separate_ops).results;
  for (const ConvolutionRun how : {ConvolutionRun::separate_ops, ConvolutionRun::layer_step}) {
    SCOPED_TRACE(how == ConvolutionRun::separate_ops ? "separate ops" : "a layer's training step");
    const auto actual = run_convolution(backend, c, v, how).results;
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t r = 0; r < expected.size(); ++r) {
      EXPECT_TRUE(close(actual[r], expected[r], 1e-4, 1e-5 * max_abs(expected[r]) + 1e-6))
          << testing::ConvolutionResults::name(r);
    }
  }
}

TEST_P(Conformance, Conv2dAllDirections) {
  std::uint64_t seed = 10;
  for (const ConvCase& c : conv_cases()) {
    SCOPED_TRACE(c.name);
    expect_all_directions_as_ref(ref_, *backend_, {false, c.x, c.w, c.geometry, c.bias}, seed);
  }
}

TEST_P(Conformance, ConvTranspose2dAllDirections) {
  std::uint64_t seed = 100;
  for (const TransposeCase& c : transpose_cases()) {
    SCOPED_TRACE(c.name);
    expect_all_directions_as_ref(ref_, *backend_, {true, c.x, c.w, c.geometry, c.bias}, seed);
  }
}

TEST_P(Conformance, BatchNormTrainingInferenceAndBackward) {
  for (const Shape& shape : {Shape{2, 5, 3, 4}, Shape{1, 16, 5, 3}, Shape{4, 3, 1, 2}}) {
    SCOPED_TRACE(shape.text());
    const std::int64_t c = shape.c();
    const auto x = random_values(shape.elements(), 1, 3.0), dy = random_values(shape.elements(), 2);
    auto gamma = random_values(c, 3), beta = random_values(c, 4), mean = random_values(c, 5);
    auto var = random_values(c, 6);
    for (float& v : var) v = 0.5F + std::abs(v);
    std::vector<std::vector<float>> results[2];
    Backend* backends[2] = {&ref_, backend_.get()};
    for (int k = 0; k < 2; ++k) {
      Backend& be = *backends[k];
      const Shape cs{c};
      Tensor tx = upload(be, shape, x), tdy = upload(be, shape, dy), tg = upload(be, cs, gamma),
             tb = upload(be, cs, beta);
      Tensor rm = upload(be, cs, mean), rv = upload(be, cs, var);
      Tensor y = be.allocate(shape), sm = be.allocate(cs), sv = be.allocate(cs),
             yi = be.allocate(shape);
      Tensor dx = be.allocate(shape), dg = be.allocate(cs), db = be.allocate(cs);
      Tensor dx2 = be.allocate(shape), dg2 = be.allocate(cs), db2 = be.allocate(cs);
      be.batch_norm_forward_inference(tx, tg, tb, rm, rv, 1e-5F, yi);
      be.batch_norm_forward_training(tx, tg, tb, 1e-5F, 0.1F, y, sm, sv, rm, rv);
      be.batch_norm_backward(tdy, tx, tg, sm, sv, 1e-5F, false, dx, dg, db);
      be.batch_norm_backward(tdy, tx, tg, rm, rv, 1e-5F, true, dx2, dg2, db2);
      results[k] = {download(be, yi), download(be, y),   download(be, sm),  download(be, sv),
                    download(be, rm), download(be, rv),  download(be, dx),  download(be, dg),
                    download(be, db), download(be, dx2), download(be, dg2), download(be, db2)};
    }
    const char* names[] = {"inference",
                           "training output",
                           "batch mean",
                           "batch variance",
                           "running mean",
                           "running variance",
                           "dx",
                           "dgamma",
                           "dbeta",
                           "dx (constant statistics)",
                           "dgamma (constant statistics)",
                           "dbeta (constant statistics)"};
    for (std::size_t r = 0; r < results[0].size(); ++r) {
      EXPECT_TRUE(close(results[1][r], results[0][r], 1e-4, 1e-5 * max_abs(results[0][r]) + 1e-6))
          << names[r];
    }
  }
}

// The pieces of batch norm over several ranks: statistics, gradient sums, and the gradient from
// totals (here this batch's sums scaled, as if other ranks had added theirs, over 3x the count).
// With this batch's own sums and count, the gradient is batch_norm_backward's.
TEST_P(Conformance, BatchNormAcrossRanksPieces) {
  for (const Shape& shape : {Shape{2, 5, 3, 4}, Shape{1, 16, 5, 3}, Shape{4, 3, 1, 2}}) {
    SCOPED_TRACE(shape.text());
    const std::int64_t c = shape.c(), count = shape.n() * shape.h() * shape.w();
    auto x = random_values(shape.elements(), 21, 3.0);
    for (float& v : x) v += 4.0F;  // a mean far from 0, as after a ReLU
    const auto dy = random_values(shape.elements(), 22), gamma = random_values(c, 23);
    auto totals_dy_xhat = random_values(c, 24), totals_dy = random_values(c, 25);
    std::vector<std::vector<float>> results[2];
    Backend* backends[2] = {&ref_, backend_.get()};
    for (int k = 0; k < 2; ++k) {
      Backend& be = *backends[k];
      const Shape cs{c};
      Tensor tx = upload(be, shape, x), tdy = upload(be, shape, dy), tg = upload(be, cs, gamma);
      Tensor mean = be.allocate(cs), variance = be.allocate(cs), dg = be.allocate(cs),
             db = be.allocate(cs);
      be.batch_norm_statistics(tx, mean, variance);
      be.batch_norm_backward_reduce(tdy, tx, mean, variance, 1e-5F, dg, db);
      Tensor own = be.allocate(shape), whole = be.allocate(shape), dg2 = be.allocate(cs),
             db2 = be.allocate(cs), dx = be.allocate(shape);
      be.batch_norm_backward_data(tdy, tx, tg, mean, variance, 1e-5F, dg, db, count, own);
      be.batch_norm_backward(tdy, tx, tg, mean, variance, 1e-5F, false, whole, dg2, db2);
      EXPECT_TRUE(close(download(be, own), download(be, whole), 1e-4,
                        1e-5 * max_abs(download(be, whole)) + 1e-6))
          << be.name() << ": with this batch's own sums";
      const Tensor t1 = upload(be, cs, totals_dy_xhat), t2 = upload(be, cs, totals_dy);
      be.batch_norm_backward_data(tdy, tx, tg, mean, variance, 1e-5F, t1, t2, 3 * count, dx);
      results[k] = {download(be, mean), download(be, variance), download(be, dg), download(be, db),
                    download(be, dx)};
    }
    const char* names[] = {"mean", "variance", "sum of dy * xhat", "sum of dy", "dx from totals"};
    for (std::size_t r = 0; r < results[0].size(); ++r) {
      EXPECT_TRUE(close(results[1][r], results[0][r], 1e-4, 1e-5 * max_abs(results[0][r]) + 1e-6))
          << names[r];
    }
  }
}

TEST_P(Conformance, ReluAndRelu6IncludingTheBoundaries) {
  const Shape shape{2, 3, 4, 5};
  auto x = random_values(shape.elements(), 7, 8.0);
  x[0] = 0.0F;
  x[1] = 6.0F;
  x[2] = -0.0F;
  x[3] = 6.5F;
  const auto dy = random_values(shape.elements(), 8);
  for (const float cap : {0.0F, 6.0F}) {
    std::vector<float> results[2][2];
    Backend* backends[2] = {&ref_, backend_.get()};
    for (int k = 0; k < 2; ++k) {
      Backend& be = *backends[k];
      Tensor tx = upload(be, shape, x), tdy = upload(be, shape, dy), y = be.allocate(shape),
             dx = be.allocate(shape);
      be.relu_forward(tx, y, cap);
      be.relu_backward(tdy, y, dx, cap);
      results[k][0] = download(be, y);
      results[k][1] = download(be, dx);
      be.relu_forward(tx, tx, cap);  // in place
      EXPECT_EQ(download(be, tx), results[k][0]);
    }
    EXPECT_EQ(results[1][0], results[0][0]) << "cap " << cap;
    EXPECT_EQ(results[1][1], results[0][1]) << "cap " << cap;
  }
}

TEST_P(Conformance, MaxPoolForwardAndBackward) {
  for (const auto& [shape, g] : {std::pair{Shape{2, 3, 9, 7}, PoolGeometry{}},
                                 std::pair{Shape{1, 5, 8, 8}, PoolGeometry{2, 2, 2, 2, 0, 0, 0, 0}},
                                 std::pair{Shape{3, 17, 5, 6}, PoolGeometry{}}}) {
    SCOPED_TRACE(shape.text());
    const Shape ys = max_pool_output_shape(shape, g);
    const auto x = random_values(shape.elements(), 9), dy = random_values(ys.elements(), 10);
    std::vector<float> results[2][2];
    Backend* backends[2] = {&ref_, backend_.get()};
    for (int k = 0; k < 2; ++k) {
      Backend& be = *backends[k];
      Tensor tx = upload(be, shape, x), tdy = upload(be, ys, dy), y = be.allocate(ys),
             dx = be.allocate(shape);
      be.max_pool_forward(tx, y, g);
      be.max_pool_backward(tdy, tx, dx, g);
      results[k][0] = download(be, y);
      results[k][1] = download(be, dx);
    }
    EXPECT_EQ(results[1][0], results[0][0]);
    EXPECT_TRUE(close(results[1][1], results[0][1], 1e-6, 1e-7));
  }
}

TEST_P(Conformance, AddAndChannelAffine) {
  const Shape shape{2, 3, 5, 4};
  const auto a = random_values(shape.elements(), 11), b = random_values(shape.elements(), 12);
  const std::vector<float> scale = {0.5F, -2.0F, 1.0F / 58.0F}, shift = {1.0F, 0.25F, -2.1F};
  std::vector<float> results[2][2];
  Backend* backends[2] = {&ref_, backend_.get()};
  for (int k = 0; k < 2; ++k) {
    Backend& be = *backends[k];
    Tensor ta = upload(be, shape, a), tb = upload(be, shape, b), y = be.allocate(shape),
           z = be.allocate(shape);
    be.add(ta, tb, y);
    be.channel_affine(ta, scale, shift, z);
    results[k][0] = download(be, y);
    results[k][1] = download(be, z);
  }
  EXPECT_EQ(results[1][0], results[0][0]);
  EXPECT_TRUE(close(results[1][1], results[0][1], 1e-6, 1e-7));
}

// Score maps with ties (the first maximum wins), a NaN first cell (it stays), NaNs elsewhere (never
// chosen), a map whose maximum is its last cell and one of equal values; the values are copied, so
// every backend gives exactly ref's.
TEST_P(Conformance, FindPeaksAsTheReference) {
  const Shape score_shape{2, 3, 5, 7}, locref_shape{2, 6, 5, 7};
  std::vector<float> score = random_values(score_shape.elements(), 21, 4.0);
  const std::vector<float> locref = random_values(locref_shape.elements(), 22);
  const auto at = [&](std::int64_t n, std::int64_t j, std::int64_t cell) -> float& {
    return score[static_cast<std::size_t>((n * 3 + j) * 35 + cell)];
  };
  at(0, 0, 9) = at(0, 0, 20) = 50.0F;  // a tie: cell 9
  at(0, 1, 0) = std::nanf("");         // stays cell 0
  at(0, 2, 3) = std::nanf("");
  at(0, 2, 30) = 60.0F;                                                   // past a NaN: cell 30
  at(1, 0, 34) = 70.0F;                                                   // the last cell
  for (std::int64_t cell = 0; cell < 35; ++cell) at(1, 1, cell) = -1.5F;  // all equal: cell 0
  std::vector<float> results[2];
  Backend* backends[2] = {&ref_, backend_.get()};
  for (int k = 0; k < 2; ++k) {
    Backend& be = *backends[k];
    Tensor peaks = be.allocate_flat(2 * 3 * Backend::kPeakValues);
    be.find_peaks(upload(be, score_shape, score), upload(be, locref_shape, locref), peaks);
    results[k] = download(be, peaks);
  }
  const auto cell_of = [&](int k, std::int64_t n, std::int64_t j) {
    return results[k][static_cast<std::size_t>((n * 3 + j) * Backend::kPeakValues)];
  };
  EXPECT_EQ(cell_of(0, 0, 0), 9.0F);
  EXPECT_EQ(cell_of(0, 0, 1), 0.0F);
  EXPECT_EQ(cell_of(0, 0, 2), 30.0F);
  EXPECT_EQ(cell_of(0, 1, 0), 34.0F);
  EXPECT_EQ(cell_of(0, 1, 1), 0.0F);
  // dx, dy of (0, 0) at cell 9 = row 1, column 2 of channels 0 and 1.
  EXPECT_EQ(results[0][2], locref[static_cast<std::size_t>(0 * 35 + 9)]);
  EXPECT_EQ(results[0][3], locref[static_cast<std::size_t>(1 * 35 + 9)]);
  ASSERT_EQ(results[1].size(), results[0].size());
  for (std::size_t i = 0; i < results[0].size(); ++i) {
    if (std::isnan(results[0][i])) {
      EXPECT_TRUE(std::isnan(results[1][i])) << "value " << i;
    } else {
      EXPECT_EQ(results[1][i], results[0][i]) << "value " << i;
    }
  }
}

// The losses' inputs: logits, predictions, 0/1 targets and non-negative weights of one shape.
struct LossInputs {
  std::vector<float> logits, predictions, targets, weights;
};

LossInputs loss_inputs(const Shape& shape, std::uint64_t seed) {
  LossInputs inputs{
      random_values(shape.elements(), seed, 6.0), random_values(shape.elements(), seed + 1, 3.0),
      random_values(shape.elements(), seed + 2), random_values(shape.elements(), seed + 3)};
  for (float& t : inputs.targets) t = t > 0 ? 1.0F : 0.0F;
  for (float& w : inputs.weights) w = std::abs(w);
  return inputs;
}

// Cross-entropy, Huber (location refinement) and Huber with a delta no difference reaches: the
// squared error / 2 of multi-animal part-affinity fields.
TEST_P(Conformance, LossesAndTheirGradients) {
  const Shape shape{2, 4, 5, 6};
  const auto [logits, predictions, targets, weights] = loss_inputs(shape, 13);
  constexpr float kNoDelta = std::numeric_limits<float>::max();
  double sums[2][3];
  std::vector<float> grads[2][3];
  Backend* backends[2] = {&ref_, backend_.get()};
  for (int k = 0; k < 2; ++k) {
    Backend& be = *backends[k];
    Tensor tl = upload(be, shape, logits), tp = upload(be, shape, predictions),
           tt = upload(be, shape, targets);
    Tensor tw = upload(be, shape, weights), d1 = be.allocate(shape), d2 = be.allocate(shape),
           d3 = be.allocate(shape);
    sums[k][0] = be.sigmoid_cross_entropy_forward(tl, tt, tw);
    sums[k][1] = be.huber_forward(tp, tt, tw, 1.0F);
    sums[k][2] = be.huber_forward(tp, tt, tw, kNoDelta);
    be.sigmoid_cross_entropy_backward(tl, tt, tw, 0.5F, d1);
    be.huber_backward(tp, tt, tw, 1.0F, 0.05F, d2);
    be.huber_backward(tp, tt, tw, kNoDelta, 0.2F, d3);
    grads[k][0] = download(be, d1);
    grads[k][1] = download(be, d2);
    grads[k][2] = download(be, d3);
  }
  for (int term = 0; term < 3; ++term) {
    EXPECT_NEAR(sums[1][term], sums[0][term], 1e-6 * std::abs(sums[0][term])) << "term " << term;
    EXPECT_TRUE(close(grads[1][term], grads[0][term], 1e-5, 1e-7)) << "term " << term;
  }
  double squared = 0.0;  // the reference against the formula: sum of w d^2 / 2, gradient w d
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    const double d = double{predictions[i]} - targets[i];
    squared += weights[i] * d * d / 2;
    EXPECT_NEAR(grads[0][2][i], 0.2 * weights[i] * d, 1e-6) << "element " << i;
  }
  EXPECT_NEAR(sums[0][2], squared, 1e-9 * squared);
}

// A training step's loss: the sums left on the backend in a flat tensor, read back later, are the
// reference's sums; a readback started before the sums change keeps what they were.
TEST_P(Conformance, LossSumsStayOnTheBackendUntilReadBack) {
  const Shape shape{2, 3, 5, 7};
  const auto [logits, predictions, targets, weights] = loss_inputs(shape, 23);
  Tensor tl = upload(*backend_, shape, logits), tp = upload(*backend_, shape, predictions),
         tt = upload(*backend_, shape, targets), tw = upload(*backend_, shape, weights);
  Tensor sums = backend_->allocate_flat(3);
  backend_->fill(sums, 7.0F);
  backend_->huber_sum(tp, tt, tw, 1.0F, sums, 2);
  backend_->sigmoid_cross_entropy_sum(tl, tt, tw, sums, 0);
  const auto readback = backend_->make_readback(3);
  readback->start(sums);
  backend_->fill(sums, -1.0F);  // queued after the start: not what it reads
  const std::span<const float> values = readback->values();
  ASSERT_EQ(values.size(), 3U);
  Tensor rl = upload(ref_, shape, logits), rp = upload(ref_, shape, predictions),
         rt = upload(ref_, shape, targets), rw = upload(ref_, shape, weights);
  const double cross_entropy = ref_.sigmoid_cross_entropy_forward(rl, rt, rw);
  const double huber = ref_.huber_forward(rp, rt, rw, 1.0F);
  EXPECT_NEAR(values[0], cross_entropy, 1e-6 * std::abs(cross_entropy));
  EXPECT_EQ(values[1], 7.0F) << "only sums[at] is written";
  EXPECT_NEAR(values[2], huber, 1e-6 * std::abs(huber));
  readback->start(sums);
  EXPECT_EQ(readback->values()[0], -1.0F) << "a readback is reused for the next values";
}

TEST_P(Conformance, OptimizerSteps) {
  const std::int64_t count = 1000;
  const auto p0 = random_values(count, 17), g1 = random_values(count, 18),
             g2 = random_values(count, 19);
  std::vector<float> results[2][3];
  Backend* backends[2] = {&ref_, backend_.get()};
  for (int k = 0; k < 2; ++k) {
    Backend& be = *backends[k];
    const Shape s{count};
    Tensor sgd = upload(be, s, p0), velocity = be.allocate(s), gradient1 = upload(be, s, g1),
           gradient2 = upload(be, s, g2);
    be.fill(velocity, 0.0F);
    be.sgd_step(sgd, gradient1, velocity, {0.1F, 0.9F, 1e-4F});
    be.sgd_step(sgd, gradient2, velocity, {0.1F, 0.9F, 1e-4F});
    results[k][0] = download(be, sgd);
    for (int decoupled = 0; decoupled < 2; ++decoupled) {
      Tensor adam = upload(be, s, p0), m = be.allocate(s), v = be.allocate(s);
      be.fill(m, 0.0F);
      be.fill(v, 0.0F);
      AdamSettings settings{1e-3F, 0.9F, 0.999F, 1e-8F, 0.01F, decoupled == 1};
      be.adam_step(adam, gradient1, m, v, settings, 1);
      be.adam_step(adam, gradient2, m, v, settings, 2);
      results[k][1 + decoupled] = download(be, adam);
    }
  }
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(close(results[1][r], results[0][r], 1e-5, 1e-6)) << r;
}

TEST_P(Conformance, DeviceFaceMemoryAndCopies) {
  EXPECT_TRUE(backend_->name().starts_with(GetParam())) << backend_->name();
  EXPECT_FALSE(backend_->description().empty());
  // host_memory() says where tensors live, as the tensors themselves do.
  const Tensor probe = backend_->allocate_flat(1);
  EXPECT_EQ(backend_->host_memory(), probe.memory() == Memory::host);
  const auto values = random_values(2 * 3 * 5 * 7, 31);
  Tensor x = backend_->allocate(Shape{2, 3, 5, 7}), y = backend_->allocate(Shape{2, 3, 5, 7});
  EXPECT_EQ(x.layout(), backend_->activation_layout());
  backend_->copy_from_host(values.data(), x);
  backend_->copy(x, y);
  std::vector<float> back(values.size());
  backend_->copy_to_host(y, back.data());
  backend_->synchronize();
  EXPECT_EQ(back, values);
  if (backend_->host_memory()) {
    EXPECT_EQ(backend_->peak_memory_bytes(), 0);
  } else {
    EXPECT_GE(backend_->peak_memory_bytes(), static_cast<std::int64_t>(2 * values.size() * 4));
  }
}

// Backends compute in fp32 unless a precision is asked for (bf16_test.cpp, gpu_test.cpp).
// Every backend's tensors hold at least what cuDNN's do (2^31 - 1 values): analysis caps batches to
// it (pipeline::batch_within_tensor_limit), and on the CPU nothing lower than that limit is ever
// imposed.
TEST_P(Conformance, TensorsHoldAtLeastCudnnsLargest) {
  const std::int64_t largest = backend_->largest_tensor_elements();
  EXPECT_GE(largest, std::int64_t{2147483647});
  if (backend_->host_memory()) {
    EXPECT_EQ(largest, std::numeric_limits<std::int64_t>::max());
  }
}

TEST_P(Conformance, Fp32ByDefault) {
  EXPECT_EQ(backend_->plan_precision(), PlanPrecision::fp32);
  EXPECT_EQ(backend_->training_precision(), PlanPrecision::fp32);
  EXPECT_EQ(ref_.plan_precision(), PlanPrecision::fp32);
}

// A whole compiled inference plan (batch norm folded, post-ops fused) against the reference's.
TEST_P(Conformance, CompiledPlanOfAPoseNet) {
  const Shape input{2, 3, 40, 56};
  const auto image = random_values(input.elements(), 32, 127.0);
  std::vector<float> outputs[2][2];
  Backend* backends[2] = {&ref_, backend_.get()};
  for (int k = 0; k < 2; ++k) {
    auto net = build_pose_net(*backends[k], {"mobilenet_v2_0.35", 3, true});
    initialize_pose_net(*net, 33);
    auto plan = backends[k]->compile(net->fuse(true), input);
    const auto& y = plan->run(upload(*backends[k], input, image));
    for (int o = 0; o < 2; ++o)
      outputs[k][o] = download(*backends[k], y[static_cast<std::size_t>(o)]);
  }
  for (int o = 0; o < 2; ++o) {
    EXPECT_TRUE(close(outputs[1][o], outputs[0][o], 1e-3, 1e-4 * max_abs(outputs[0][o]))) << o;
  }
}

// Work recorded by a backend and replayed computes on what its tensors hold at the replay; host
// backends record none (RepeatedWork then runs op by op).
TEST_P(Conformance, RecordedWorkReplaysOnTheTensorsAsTheyAre) {
  const Shape shape{1, 4, 3, 5};
  const auto a = random_values(shape.elements(), 41), b = random_values(shape.elements(), 42);
  Tensor ta = upload(*backend_, shape, a), tb = upload(*backend_, shape, b);
  Tensor y = backend_->allocate(shape);
  std::string why;
  auto recorded = backend_->record([&] { backend_->add(ta, tb, y); }, why);
  if (backend_->host_memory()) {
    EXPECT_EQ(recorded, nullptr);
    EXPECT_FALSE(why.empty());
    return;
  }
  if (recorded == nullptr && why.find("LABPOSE_CUDA_GRAPHS=0") != std::string::npos)
    GTEST_SKIP() << why;
  ASSERT_NE(recorded, nullptr) << why;
  const auto c = random_values(shape.elements(), 43);
  backend_->copy_from_host(c.data(), tb);  // after recording: the replay reads it
  recorded->replay();
  Tensor expected = ref_.allocate(shape);
  ref_.add(upload(ref_, shape, a), upload(ref_, shape, c), expected);
  EXPECT_EQ(download(*backend_, y), download(ref_, expected));
}

// Every method of the Backend interface has a case in this file: a new op without one fails here.
TEST(ConformanceCoverage, EveryBackendMethodHasACase) {
  const std::string interface =
      ::labpose::testing::read_text(LABPOSE_SOURCE_DIR "/nets/backend.hpp");
  // The cases, and the convolution runner they share with the bf16 tests.
  const std::string cases =
      ::labpose::testing::read_text(LABPOSE_SOURCE_DIR "/tests/nets/conformance_test.cpp") +
      ::labpose::testing::read_text(LABPOSE_SOURCE_DIR "/tests/nets/nets_test_support.hpp");
  const std::size_t begin = interface.find("class Backend {");
  const std::string body = interface.substr(begin, interface.find("\n};", begin) - begin);
  const std::regex method(R"(virtual [^;(]*?\b(\w+)\()");
  int methods = 0;
  for (auto it = std::sregex_iterator(body.begin(), body.end(), method);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    if (name == "Backend") continue;  // the destructor
    ++methods;
    EXPECT_TRUE(cases.find("." + name + "(") != std::string::npos ||
                cases.find("->" + name + "(") != std::string::npos)
        << "Backend::" << name << " has no case in the conformance suite";
  }
  EXPECT_GT(methods, 30);
}

INSTANTIATE_TEST_SUITE_P(Backends, Conformance, ::testing::ValuesIn(testing::backends_under_test()),
                         testing::backend_test_name);

}  // namespace
}  // namespace labpose::nets
