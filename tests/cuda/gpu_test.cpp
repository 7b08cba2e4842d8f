// The CUDA backend on a GPU (ctest label gpu; every test skips, saying why, where no usable GPU
// exists): fp16/bf16 inference plans against fp32,
// a short training run against the CPU backend (losses and decoded keypoints), and a steady-state
// training loop that allocates no device memory. The conformance suites (tests/nets) cover every
// Backend op on cuda against the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "cuda/backend.hpp"
#include "cuda/state.hpp"
#include "devices/devices.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "pipeline/training/targets.hpp"
#include "tests/cuda/layout_support.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::cuda {
namespace {

using nets::Shape;
using nets::Tensor;
using nets::testing::close;
using nets::testing::download;
using nets::testing::random_values;
using nets::testing::relative_l2_error;
using nets::testing::upload;
using testing::to_nchw;

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    LABPOSE_SKIP_UNLESS_USABLE("cuda");
    backend_ = devices::make_backend("cuda");
    cuda_ = &as_cuda(*backend_);
  }
  std::unique_ptr<nets::Backend> backend_;
  CudaBackend* cuda_ = nullptr;
};

TEST_F(Gpu, HalfPrecisionPlansAgreeWithSinglePrecision) {
  const int major = cuda_->state().major;
  for (const auto& [precision, tolerance] :
       {std::pair{devices::PlanPrecision::fp16, 1e-2}, {devices::PlanPrecision::bf16, 4e-2}}) {
    if (precision == devices::PlanPrecision::bf16 && major < 8) continue;
    auto reduced = devices::make_backend("cuda", precision);
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
        EXPECT_LT(
            relative_l2_error(download(*reduced, actual[k]), download(*backend_, expected[k])),
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
  // Targets from the training loader's host code (the same on both devices), uploaded.
  const std::int64_t joints = 2, rows = shapes[0].h(), columns = shapes[0].w();
  const std::int64_t per_score = joints * rows * columns, per_locref = 2 * per_score;
  std::vector<float> score(static_cast<std::size_t>(shapes[0].elements())),
      locref(static_cast<std::size_t>(shapes[1].elements())), weights(locref.size());
  for (std::int64_t n = 0; n < 2; ++n) {
    double x[2], y[2];
    for (std::int64_t j = 0; j < joints; ++j) {
      x[j] = keypoints[static_cast<std::size_t>((n * 2 + j) * 2)];
      y[j] = keypoints[static_cast<std::size_t>((n * 2 + j) * 2 + 1)];
    }
    pipeline::build_targets(x, y, static_cast<int>(joints), static_cast<int>(rows),
                            static_cast<int>(columns), pipeline::TargetSettings{},
                            score.data() + n * per_score, locref.data() + n * per_locref,
                            weights.data() + n * per_locref);
  }
  const Tensor x = upload(backend, input, pixels);
  const Tensor score_targets = upload(backend, shapes[0], score);
  const Tensor locref_targets = upload(backend, shapes[1], locref);
  const Tensor locref_weights = upload(backend, shapes[1], weights);
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
  auto cpu = devices::make_backend("cpu");
  const TrainingRun expected = train(*cpu, 6);
  const TrainingRun actual = train(*backend_, 6);
  ASSERT_EQ(actual.losses.size(), expected.losses.size());
  for (std::size_t step = 0; step < expected.losses.size(); ++step) {
    EXPECT_NEAR(actual.losses[step], expected.losses[step], 2e-3 * expected.losses[step])
        << "step " << step;
  }
  EXPECT_LT(expected.losses.back(), expected.losses.front()) << "the run must learn something";
  EXPECT_LT(relative_l2_error(actual.scoremap, expected.scoremap), 5e-3);
  EXPECT_LT(relative_l2_error(actual.locref, expected.locref), 5e-3);
  EXPECT_GT(actual.device_allocations_after_warmup, 0U);
  EXPECT_EQ(actual.device_allocations_at_end, actual.device_allocations_after_warmup)
      << "the steady-state training loop must reuse pooled memory";
}

TEST_F(Gpu, DoctorsConvolutionCheckAgreesWithTheCpu) {
  const devices::ConvolutionCheck check = devices::check_convolution("cuda");
  EXPECT_TRUE(check.agrees()) << check.max_difference << " for outputs up to "
                              << check.max_magnitude;
  EXPECT_GT(check.max_magnitude, 0.5);
}

}  // namespace
}  // namespace labpose::cuda
