// The CUDA backend on a GPU (ctest label gpu; every test skips, saying why, where no usable GPU
// exists): fp16/bf16 inference plans of every architecture against fp32, a short training run
// against the CPU backend (losses and outputs), in strict fp32 and in TF32, and a steady-state
// training loop that allocates no device memory. The cases are tests/nets/pose_net_cases.hpp's; the
// conformance suites (tests/nets) cover every Backend op on cuda against the reference.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cuda/backend.hpp"
#include "cuda/graphs.hpp"
#include "cuda/state.hpp"
#include "devices/devices.hpp"
#include "nets/fused_graph.hpp"
#include "nets/models/models.hpp"
#include "tests/nets/nets_test_support.hpp"
#include "tests/nets/pose_net_cases.hpp"

namespace labpose::cuda {
namespace {

using nets::testing::download;
using nets::testing::relative_l2_error;
using nets::testing::upload;

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    LABPOSE_SKIP_UNLESS_USABLE("cuda");
    backend_ = devices::make_backend("cuda");
    cuda_ = &as_cuda(*backend_);
  }
  // Six steps of train_on_disks training in `precision` follow the same six in strict fp32 within
  // `per_step` per loss (outputs within 5 %), and learn.
  void expect_training_follows_strict_fp32(devices::PlanPrecision precision, double per_step) {
    auto reduced = devices::make_backend("cuda", precision);
    ASSERT_EQ(reduced->training_precision(), precision);
    const nets::testing::TrainingRun expected = nets::testing::train_on_disks(*backend_, 6);
    nets::testing::expect_same_run(nets::testing::train_on_disks(*reduced, 6), expected, per_step,
                                   5e-2);
  }
  std::unique_ptr<nets::Backend> backend_;
  CudaBackend* cuda_ = nullptr;
};

// Every architecture in fp16 and bf16 against fp32, on cases whose values fit fp16 (checked on the
// CPU by PoseNets.HalfPrecisionCasesStayWithinFp16sRange).
TEST_F(Gpu, HalfPrecisionPlansAgreeWithSinglePrecision) {
  const int major = cuda_->state().major;
  for (const auto& [precision, tolerance] :
       {std::pair{devices::PlanPrecision::fp16, 1e-2}, {devices::PlanPrecision::bf16, 4e-2}}) {
    if (precision == devices::PlanPrecision::bf16 && major < 8) continue;
    auto reduced = devices::make_backend("cuda", precision);
    for (const auto& architecture : nets::pose_architectures()) {
      SCOPED_TRACE(architecture + " in " + nets::precision_name(precision));
      const nets::testing::HalfPrecisionCase c =
          nets::testing::half_precision_case(*backend_, architecture);
      auto full = backend_->compile(c.graph, c.input);
      auto half = reduced->compile(c.graph, c.input);
      const auto& expected = full->run(upload(*backend_, c.input, c.pixels));
      const auto& actual = half->run(upload(*reduced, c.input, c.pixels));
      for (std::size_t k = 0; k < 2; ++k) {
        EXPECT_LT(
            relative_l2_error(download(*reduced, actual[k]), download(*backend_, expected[k])),
            tolerance)
            << architecture << " in " << nets::precision_name(precision) << ", output " << k;
      }
    }
  }
}

// The conformance suite's several-step run (NetOnBackend.SeveralTrainingStepsFollowTheReference)
// against the CPU backend, and with no device allocation once the first steps have warmed the pool.
TEST_F(Gpu, TrainingStepsMatchTheCpuAndAllocateNothingOnceWarm) {
  auto cpu = devices::make_backend("cpu");
  const nets::testing::TrainingRun expected = nets::testing::train_on_disks(*cpu, 6);
  std::size_t allocations_after_warmup = 0, allocations_at_end = 0;
  const nets::testing::TrainingRun actual =
      nets::testing::train_on_disks(*backend_, 6, 0.01F, [&](int step) {
        const std::size_t count = cuda_->memory_statistics().device_allocations;
        if (step == 1) allocations_after_warmup = count;
        allocations_at_end = count;
      });
  nets::testing::expect_same_run(actual, expected, 1e-4, 1e-3);
  EXPECT_GT(allocations_after_warmup, 0U);
  EXPECT_EQ(allocations_at_end, allocations_after_warmup)
      << "the steady-state training loop must reuse pooled memory";
}

// TF32 training convolutions (the default on compute capability 8.0+) follow strict fp32 to TF32's
// rounding (10-bit products, fp32 sums) and learn as much.
TEST_F(Gpu, Tf32TrainingFollowsStrictFp32) {
  if (cuda_->state().major < 8) GTEST_SKIP() << "TF32 needs compute capability 8.0";
  expect_training_follows_strict_fp32(devices::PlanPrecision::tf32, 3e-2);
}

// Mixed precision on a GPU (bf16 activations and convolutions, fp32 parameters and sums, as the
// CPU's bf16 training) follows strict fp32 loss by loss as closely as the CPU's does, and learns.
// Op by op: Bf16Activations.*/cuda in nets_tests.
TEST_F(Gpu, Bf16TrainingFollowsFp32) {
  if (cuda_->state().major < 8) GTEST_SKIP() << "bf16 needs compute capability 8.0";
  expect_training_follows_strict_fp32(devices::PlanPrecision::bf16, 2e-2);
}

// After its first run (op by op), a plan runs as a CUDA graph per input address: the same outputs
// as its first run for each of two inputs in turn, new values in an input are read, and a plan
// compiled with LABPOSE_CUDA_GRAPHS=0 (op by op throughout) agrees.
TEST_F(Gpu, PlansRunAsCudaGraphsWithTheSameOutputs) {
  if (!cuda_graphs_enabled()) GTEST_SKIP() << "LABPOSE_CUDA_GRAPHS=0 turns CUDA graphs off";
  const nets::testing::HalfPrecisionCase c =
      nets::testing::half_precision_case(*backend_, "mobilenet_v2_0.35");
  std::vector<float> other = c.pixels;
  for (float& v : other) v = 255.0F - v;
  setenv("LABPOSE_CUDA_GRAPHS", "0", 1);
  auto op_by_op = backend_->compile(c.graph, c.input);
  unsetenv("LABPOSE_CUDA_GRAPHS");
  auto plan = backend_->compile(c.graph, c.input);
  nets::Tensor a = upload(*backend_, c.input, c.pixels), b = upload(*backend_, c.input, other);
  const auto outputs_of = [&](nets::InferencePlan& p, const nets::Tensor& input) {
    const auto& out = p.run(input);
    return std::vector<std::vector<float>>{download(*backend_, out[0]),
                                           download(*backend_, out[1])};
  };
  const auto expect_same = [](const std::vector<std::vector<float>>& actual,
                              const std::vector<std::vector<float>>& expected, double tolerance) {
    for (std::size_t k = 0; k < 2; ++k)
      EXPECT_LE(relative_l2_error(actual[k], expected[k]), tolerance) << "output " << k;
  };
  const std::int64_t launched_before = graphs_launched();
  const auto first_a = outputs_of(*plan, a);  // op by op
  const auto first_b = outputs_of(*plan, b);  // captured for b
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    expect_same(outputs_of(*plan, a), first_a, 1e-6);
    expect_same(outputs_of(*plan, b), first_b, 1e-6);
  }
  EXPECT_EQ(graphs_launched() - launched_before, 5) << "every run after the first is a graph";
  EXPECT_GT(relative_l2_error(first_a[0], first_b[0]), 1e-3) << "the inputs give other maps";
  backend_->copy_from_host(other.data(), a);
  expect_same(outputs_of(*plan, a), first_b, 1e-6);
  expect_same(outputs_of(*op_by_op, b), first_b, 1e-4);
  expect_same(outputs_of(*op_by_op, b), first_b, 1e-4);
}

// A training step's forward and backward recorded as CUDA graphs and replayed (what `train` does)
// follow the same run op by op; from the third step on, each is one graph launch.
TEST_F(Gpu, RecordedTrainingStepsFollowTheStepsRunOpByOp) {
  if (!cuda_graphs_enabled()) GTEST_SKIP() << "LABPOSE_CUDA_GRAPHS=0 turns CUDA graphs off";
  const std::int64_t before = graphs_launched();
  const nets::testing::TrainingRun recorded =
      nets::testing::train_on_disks(*backend_, 6, 0.01F, {}, true);
  EXPECT_EQ(graphs_launched() - before, 10) << "steps 2 to 6 replay forward and backward";
  nets::testing::expect_same_run(recorded, nets::testing::train_on_disks(*backend_, 6), 1e-5, 1e-4);
}

TEST_F(Gpu, DoctorsConvolutionCheckAgreesWithTheCpu) {
  const devices::ConvolutionCheck check = devices::check_convolution("cuda");
  EXPECT_TRUE(check.agrees()) << check.max_difference << " for outputs up to "
                              << check.max_magnitude;
  EXPECT_GT(check.max_magnitude, 0.5);
}

}  // namespace
}  // namespace labpose::cuda
