// The CUDA backend on a GPU (ctest label gpu; every test skips, saying why, where no usable GPU
// exists): the pose kernels against their host arithmetic, fp16/bf16 inference plans against fp32,
// a short training run against the CPU backend (losses and decoded keypoints), and a steady-state
// training loop that allocates no device memory. The conformance suites (tests/nets) cover every
// Backend op on cuda against the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "cuda/backend.hpp"
#include "cuda/pose.hpp"
#include "cuda/state.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "pipeline/devices.hpp"
#include "tests/cuda/layout_support.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::cuda {
namespace {

using nets::Shape;
using nets::Tensor;
using nets::testing::close;
using nets::testing::download;
using nets::testing::random_values;
using nets::testing::upload;
using testing::to_nchw;

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    LABPOSE_SKIP_UNLESS_USABLE("cuda");
    backend_ = pipeline::make_backend("cuda");
    cuda_ = &as_cuda(*backend_);
  }
  std::unique_ptr<nets::Backend> backend_;
  CudaBackend* cuda_ = nullptr;
};

double relative_l2(const std::vector<float>& actual, const std::vector<float>& expected) {
  double difference = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double d = double{actual[i]} - double{expected[i]};
    difference += d * d;
    norm += double{expected[i]} * double{expected[i]};
  }
  return std::sqrt(difference / std::max(norm, 1e-30));
}

TEST_F(Gpu, TargetsAreThoseOfTheHostArithmetic) {
  const std::vector<float> keypoints = {30.0F, 20.0F, NAN,   NAN,   100.5F, 7.25F,
                                        3.0F,  44.0F, 60.0F, 60.0F, 0.0F,   0.0F};
  const std::vector<float> radii = {17.0F, 21.25F};
  const Shape maps{2, 3, 8, 16}, locref_shape{2, 6, 8, 16};
  Tensor score = backend_->allocate(maps), locref = backend_->allocate(locref_shape),
         weights = backend_->allocate(locref_shape);
  build_targets(*cuda_, keypoints, radii, PoseGeometry{}, score, locref, weights);
  std::vector<float> host_score(static_cast<std::size_t>(maps.elements())),
      host_locref(static_cast<std::size_t>(locref_shape.elements())),
      host_weights(host_locref.size());
  const TargetMaps out{host_score.data(), host_locref.data(), host_weights.data()};
  for (std::int64_t i = 0; i < maps.elements(); ++i)
    write_targets(i, keypoints.data(), radii.data(), out, 3, 8, 16, 8.0F, 7.2801F);
  EXPECT_EQ(download(*backend_, score), to_nchw(host_score, maps));
  EXPECT_TRUE(close(download(*backend_, locref), to_nchw(host_locref, locref_shape), 1e-6, 1e-7));
  EXPECT_EQ(download(*backend_, weights), to_nchw(host_weights, locref_shape));
}

TEST_F(Gpu, PeaksAreTheRowMajorFirstMaximaDecoded) {
  const Shape maps{3, 4, 30, 41}, locref_shape{3, 8, 30, 41};
  auto logits = random_values(maps.elements(), 21, 4.0);
  for (std::size_t i = 0; i < logits.size(); i += 97) logits[i] = 3.99F;  // ties
  const auto offsets = random_values(locref_shape.elements(), 22);
  const Tensor score = upload(*backend_, maps, logits),
               locref = upload(*backend_, locref_shape, offsets);
  const std::vector<Keypoint> found = find_peaks(*cuda_, score, locref, PoseGeometry{});
  ASSERT_EQ(found.size(), 12U);
  for (std::int64_t n = 0; n < 3; ++n) {
    for (std::int64_t j = 0; j < 4; ++j) {
      // numpy's argmax over the NCHW map, then DeepLabCut's decoding.
      std::int64_t best = 0;
      const std::int64_t base = (n * 4 + j) * 30 * 41;
      for (std::int64_t cell = 1; cell < maps.h() * maps.w(); ++cell) {
        if (logits[static_cast<std::size_t>(base + cell)] >
            logits[static_cast<std::size_t>(base + best)])
          best = cell;
      }
      const std::int64_t row = best / 41, col = best % 41;
      const float dx = offsets[static_cast<std::size_t>(((n * 8 + 2 * j) * 30 + row) * 41 + col)];
      const float dy =
          offsets[static_cast<std::size_t>(((n * 8 + 2 * j + 1) * 30 + row) * 41 + col)];
      const Keypoint& k = found[static_cast<std::size_t>(n * 4 + j)];
      EXPECT_FLOAT_EQ(k.x, static_cast<float>(col) * 8.0F + 4.0F + dx * 7.2801F) << n << j;
      EXPECT_FLOAT_EQ(k.y, static_cast<float>(row) * 8.0F + 4.0F + dy * 7.2801F) << n << j;
      EXPECT_NEAR(k.likelihood,
                  1.0 / (1.0 + std::exp(-double{logits[static_cast<std::size_t>(base + best)]})),
                  1e-6);
    }
  }
}

TEST_F(Gpu, UploadedFramesAreResizedAndNormalizedAsOnTheHost) {
  const std::int64_t batch = 2, height = 45, width = 61;
  std::vector<std::uint8_t> frames(static_cast<std::size_t>(batch * height * width * 3));
  for (std::size_t i = 0; i < frames.size(); ++i)
    frames[i] = static_cast<std::uint8_t>((i * 37 + i / 7) % 256);
  FrameAffine affine;
  affine.shift[0] = -123.68F;
  affine.shift[1] = -116.779F;
  affine.shift[2] = -103.939F;
  for (const auto& [out_h, out_w] : {std::pair<std::int64_t, std::int64_t>{45, 61}, {32, 48}}) {
    const Shape shape{batch, 3, out_h, out_w};
    Tensor images = backend_->allocate(shape);
    upload_frames(*cuda_, frames.data(), batch, height, width, affine, images);
    std::vector<float> expected(static_cast<std::size_t>(shape.elements()));
    for (std::int64_t i = 0; i < shape.elements(); ++i)
      expected[static_cast<std::size_t>(i)] =
          image_element(i, frames.data(), height, width, out_h, out_w, affine);
    EXPECT_TRUE(close(download(*backend_, images), to_nchw(expected, shape), 1e-6, 1e-4))
        << out_w << "x" << out_h;
  }
}

TEST_F(Gpu, HalfPrecisionPlansAgreeWithSinglePrecision) {
  const int major = cuda_->state().major;
  for (const auto& [precision, tolerance] :
       {std::pair{pipeline::PlanPrecision::fp16, 1e-2}, {pipeline::PlanPrecision::bf16, 4e-2}}) {
    if (precision == pipeline::PlanPrecision::bf16 && major < 8) continue;
    auto reduced = pipeline::make_backend("cuda", precision);
    for (const char* architecture : {"resnet_50", "mobilenet_v2_1.0"}) {
      SCOPED_TRACE(architecture);
      auto net = nets::build_pose_net(*backend_, {architecture, 4, true});
      nets::initialize_pose_net(*net, 3);
      const nets::FusedGraph graph = net->fuse(true);
      const Shape input{2, 3, 96, 128};
      const auto pixels = random_values(input.elements(), 4, 127.0);
      auto full = backend_->compile(graph, input);
      auto half = reduced->compile(graph, input);
      const auto& expected = full->run(upload(*backend_, input, pixels));
      const auto& actual = half->run(upload(*reduced, input, pixels));
      for (std::size_t k = 0; k < 2; ++k) {
        EXPECT_LT(relative_l2(download(*reduced, actual[k]), download(*backend_, expected[k])),
                  tolerance)
            << "output " << k;
      }
    }
  }
}

// Synthetic images with a bright disk per keypoint; DeepLabCut's loss; SGD.
struct TrainingRun {
  std::vector<double> losses;
  std::vector<float> scoremap, locref;  // evaluation outputs after training
  std::size_t device_allocations_after_warmup = 0, device_allocations_at_end = 0;
};

TrainingRun train(nets::Backend& backend, int steps) {
  const Shape input{2, 3, 64, 64};
  const std::vector<float> keypoints = {20.0F, 24.0F, 44.0F, 40.0F, 30.0F, 10.0F, 12.0F, 50.0F};
  std::vector<float> pixels(static_cast<std::size_t>(input.elements()), 40.0F);
  for (std::int64_t n = 0; n < 2; ++n) {
    for (std::int64_t j = 0; j < 2; ++j) {
      const float x = keypoints[static_cast<std::size_t>((n * 2 + j) * 2)];
      const float y = keypoints[static_cast<std::size_t>((n * 2 + j) * 2 + 1)];
      for (std::int64_t c = 0; c < 3; ++c) {
        for (std::int64_t h = 0; h < 64; ++h) {
          for (std::int64_t w = 0; w < 64; ++w) {
            const float dx = static_cast<float>(w) - x, dy = static_cast<float>(h) - y;
            if (dx * dx + dy * dy < 25.0F)
              pixels[static_cast<std::size_t>(((n * 3 + c) * 64 + h) * 64 + w)] =
                  j == 0 ? 220.0F : static_cast<float>(100 + 50 * c);
          }
        }
      }
    }
  }
  auto net = nets::build_pose_net(backend, {"mobilenet_v2_0.35", 2, true});
  nets::initialize_pose_net(*net, 5);
  const auto shapes = net->output_shapes(input);
  // Targets from the host arithmetic (the same on both devices), uploaded.
  const std::int64_t joints = 2, rows = shapes[0].h(), columns = shapes[0].w();
  std::vector<float> score(static_cast<std::size_t>(shapes[0].elements())),
      locref(static_cast<std::size_t>(shapes[1].elements())), weights(locref.size());
  const std::vector<float> radii = {17.0F, 17.0F};
  for (std::int64_t i = 0; i < shapes[0].elements(); ++i) {
    write_targets(i, keypoints.data(), radii.data(),
                  TargetMaps{score.data(), locref.data(), weights.data()}, joints, rows, columns,
                  8.0F, 7.2801F);
  }
  const Tensor x = upload(backend, input, pixels);
  const Tensor score_targets = upload(backend, shapes[0], to_nchw(score, shapes[0]));
  const Tensor locref_targets = upload(backend, shapes[1], to_nchw(locref, shapes[1]));
  const Tensor locref_weights = upload(backend, shapes[1], to_nchw(weights, shapes[1]));
  Tensor ones = backend.allocate(shapes[0]);
  backend.fill(ones, 1.0F);
  std::vector<Tensor> gradients = {backend.allocate(shapes[0]), backend.allocate(shapes[1])};
  Tensor velocity = backend.allocate_flat(net->trainable_count());
  backend.fill(velocity, 0.0F);
  TrainingRun run;
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  for (int step = 0; step < steps; ++step) {
    const auto& outputs = net->forward(x, true);
    const double cross_entropy =
        backend.sigmoid_cross_entropy_forward(outputs[0], score_targets, ones);
    const double huber = backend.huber_forward(outputs[1], locref_targets, locref_weights, 1.0F);
    run.losses.push_back(cross_entropy / static_cast<double>(shapes[0].elements()) + 0.05 * huber);
    backend.sigmoid_cross_entropy_backward(outputs[0], score_targets, ones,
                                           1.0F / static_cast<float>(shapes[0].elements()),
                                           gradients[0]);
    backend.huber_backward(outputs[1], locref_targets, locref_weights, 1.0F, 0.05F, gradients[1]);
    net->backward(gradients);
    backend.sgd_step(net->trainable_values(), net->trainable_gradients(), velocity,
                     {0.01F, 0.9F, 0.0F});
    if (cuda != nullptr && step == 1)
      run.device_allocations_after_warmup = cuda->memory_statistics().device_allocations;
  }
  if (cuda != nullptr) run.device_allocations_at_end = cuda->memory_statistics().device_allocations;
  // Predictions of the trained net.
  const auto& outputs = net->forward(x, false);
  run.scoremap = download(backend, outputs[0]);
  run.locref = download(backend, outputs[1]);
  return run;
}

TEST_F(Gpu, TrainingStepsMatchTheCpuAndAllocateNothingOnceWarm) {
  auto cpu = pipeline::make_backend("cpu");
  const TrainingRun expected = train(*cpu, 6);
  const TrainingRun actual = train(*backend_, 6);
  ASSERT_EQ(actual.losses.size(), expected.losses.size());
  for (std::size_t step = 0; step < expected.losses.size(); ++step) {
    EXPECT_NEAR(actual.losses[step], expected.losses[step], 2e-3 * expected.losses[step])
        << "step " << step;
  }
  EXPECT_LT(expected.losses.back(), expected.losses.front()) << "the run must learn something";
  EXPECT_LT(relative_l2(actual.scoremap, expected.scoremap), 5e-3);
  EXPECT_LT(relative_l2(actual.locref, expected.locref), 5e-3);
  EXPECT_GT(actual.device_allocations_after_warmup, 0U);
  EXPECT_EQ(actual.device_allocations_at_end, actual.device_allocations_after_warmup)
      << "the steady-state training loop must reuse pooled memory";
}

TEST_F(Gpu, DoctorsConvolutionCheckAgreesWithTheCpu) {
  const pipeline::ConvolutionCheck check = pipeline::check_convolution("cuda");
  EXPECT_TRUE(check.agrees()) << check.max_difference << " for outputs up to "
                              << check.max_magnitude;
  EXPECT_GT(check.max_magnitude, 0.5);
}

}  // namespace
}  // namespace labpose::cuda
